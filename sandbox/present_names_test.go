package sandbox

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/tools"
)

// A file whose name carries a right-to-left override ("invoice\u202Efdp.exe"
// reads as "invoiceexe.pdf") reaches the chat under its cleaned name, and
// still opens.
func TestPresentFilesStripsBidiFromNames(t *testing.T) {
	m := newManager(t, Options{})
	out := hostDir(t, m, "t", "outputs")
	rlo := "invoice\u202Efdp.exe"
	others := "a\u2066b\u2069\u200Ec\u200F\x07\u0085d.txt"
	writeHost(t, filepath.Join(out, rlo), "MZ")
	writeHost(t, filepath.Join(out, others), "x")

	var events []event.Event
	ctx := tools.WithEnv(context.Background(), &tools.Env{ThreadID: "t", Emit: func(ev event.Event) { events = append(events, ev) }})
	args, _ := json.Marshal(map[string]any{"filepaths": []string{Outputs + "/" + rlo, Outputs + "/" + others}})
	got, err := tools.NewRegistry(m.Tools()...).Call(ctx, "present_files", args)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `(shown to the user as "invoicefdp.exe"`) {
		t.Errorf("the model is not told the name the user sees: %q", got)
	}
	if len(events) != 1 {
		t.Fatalf("events = %+v", events)
	}
	files := events[0].(event.FilesPresented).Files
	want := []event.File{
		{Name: "invoicefdp.exe", Path: Outputs + "/" + rlo, Size: 2},
		{Name: "abcd.txt", Path: Outputs + "/" + others, Size: 1},
	}
	if diff := cmp.Diff(want, files, cmpopts.IgnoreFields(event.File{}, "Open")); diff != "" {
		t.Errorf("presented files (-want +got):\n%s", diff)
	}
	rc, err := files[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "MZ" {
		t.Errorf("Open read %q", b)
	}
	// A retried delivery is cleaned the same way.
	f, err := m.Reopen("t", Outputs+"/"+rlo)
	if err != nil || f.Name != "invoicefdp.exe" {
		t.Errorf("Reopen = %+v, %v", f, err)
	}
}
