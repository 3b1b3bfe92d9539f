package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// TestAPIHundredConcurrentStreams: 100 threads, each with a run and a
// stream at once; every stream gets its whole answer and its end.
func TestAPIHundredConcurrentStreams(t *testing.T) {
	h := newHarness(t, config{})
	h.fake.Handle(func(req fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "the answer to " + lastUser(req) + " is " + strings.Repeat("long ", 20), Chunk: 6}
	})
	const n = 100
	ids := make([]string, n)
	for i := range ids {
		ids[i] = h.createThread()
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, id := range ids {
		wg.Go(func() {
			q := fmt.Sprintf("question %d", i)
			r := h.request("POST", "/api/threads/"+id+"/runs", map[string]any{"input": msg(q)})
			if r.status != 200 {
				errs <- fmt.Errorf("%d: start: %s", i, r)
				return
			}
			var run runJSON
			if err := jsonUnmarshal(r.body, &run); err != nil {
				errs <- err
				return
			}
			s := h.openStream(id, run.RunID, "")
			defer s.close()
			var evs []sseEvent
			for {
				ev, ok, err := s.item()
				if err != nil {
					errs <- fmt.Errorf("%d: %v", i, err)
					return
				}
				if !ok {
					break
				}
				if ev.Comment == "" {
					evs = append(evs, ev)
				}
			}
			want := "the answer to " + q + " is " + strings.Repeat("long ", 20)
			last := 0
			for _, ev := range evs {
				if ev.HasID && ev.ID <= last {
					errs <- fmt.Errorf("%d: event %s after id %d", i, ev, last)
					return
				}
				last = max(last, ev.ID)
			}
			deltas, final := streamed(t, evs)
			if len(evs) == 0 || evs[len(evs)-1].Kind != "end" || h.endStatus(evs) != "success" {
				errs <- fmt.Errorf("%d: no successful end:\n%s", i, dump(evs))
				return
			}
			if deltas != want || final != want {
				errs <- fmt.Errorf("%d: deltas %q, message %q, want %q", i, deltas, final, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, id := range ids {
		msgs := storedMessages(t, h.st, id)
		if len(msgs) != 2 || msgs[0].Content != fmt.Sprintf("question %d", i) {
			t.Errorf("thread %d: %q", i, roles(msgs))
		}
	}
}
