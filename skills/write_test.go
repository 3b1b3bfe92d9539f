package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// While one change waits for its safety review, other changes go ahead;
// the waiting change is then refused if its file changed meanwhile.
func TestReviewDoesNotHoldTheWriteLock(t *testing.T) {
	h := newHarness(t, Options{Evolution: true}, nil)
	h.reviewer()
	if _, err := h.manage(map[string]string{"action": "create", "name": "tool", "content": skillText("tool", "A tool.", "Body.")}); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	defer func() {
		select {
		case <-hold:
		default:
			close(hold)
		}
	}()
	allow := `{"decision":"allow","reason":"an ordinary skill"}`
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if strings.Contains(r.Last().Content, "HOLDME") {
			return fakeopenai.Turn{Text: allow, Hold: hold}
		}
		return fakeopenai.Turn{Text: allow}
	})
	before := len(h.fake.Requests())

	held := make(chan error, 1)
	go func() {
		_, err := h.manage(map[string]string{"action": "write_file", "name": "tool", "path": "references/a.md", "content": "HOLDME"})
		held <- err
	}()
	h.fake.WaitRequests(before + 1) // the first review is under way

	other := make(chan error, 1)
	go func() {
		_, err := h.manage(map[string]string{"action": "write_file", "name": "tool", "path": "references/a.md", "content": "meanwhile"})
		other <- err
	}()
	select {
	case err := <-other:
		if err != nil {
			t.Fatalf("the second change: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a change waited for another change's review")
	}

	close(hold)
	err := <-held
	if err == nil || !strings.Contains(err.Error(), "changed while this change was being reviewed") {
		t.Errorf("the held change: %v, want it refused as stale", err)
	}
	if got, err := os.ReadFile(filepath.Join(h.custom, "tool", "references", "a.md")); err != nil || string(got) != "meanwhile" {
		t.Errorf("references/a.md = %q (%v), want the second change's", got, err)
	}
}
