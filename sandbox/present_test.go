package sandbox

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/tools"
)

func TestPresentFiles(t *testing.T) {
	m := newManager(t, Options{})
	out := hostDir(t, m, "t", "outputs")
	writeHost(t, filepath.Join(out, "report.pdf"), "%PDF-1.7")
	writeHost(t, filepath.Join(out, "charts", "a.png"), "png")
	writeHost(t, filepath.Join(hostDir(t, m, "t", "workspace"), "draft.md"), "draft")
	writeHost(t, filepath.Join(hostDir(t, m, "t", "uploads"), "in.csv"), "a,b")

	var events []event.Event
	ctx := tools.WithEnv(context.Background(), &tools.Env{ThreadID: "t", Emit: func(ev event.Event) { events = append(events, ev) }})
	run := func(paths ...string) (string, error) {
		args, _ := json.Marshal(map[string]any{"filepaths": paths})
		return tools.NewRegistry(m.Tools()...).Call(ctx, "present_files", args)
	}

	got, err := run("/mnt/user-data/outputs/report.pdf", "/mnt/user-data/outputs/charts/a.png", "/mnt/user-data/outputs/report.pdf")
	if err != nil || got != "Presented 2 file(s) to the user:\n- /mnt/user-data/outputs/report.pdf\n- /mnt/user-data/outputs/charts/a.png" {
		t.Fatalf("present = %q, %v", got, err)
	}
	if len(events) != 1 || !isFiles(events[0]) {
		t.Fatalf("events = %+v", events)
	}
	files := events[0].(event.FilesPresented).Files
	if len(files) != 2 || files[0].Name != "report.pdf" || files[0].Size != 8 || files[0].Path != "/mnt/user-data/outputs/report.pdf" ||
		files[1].Name != "a.png" || files[1].Path != "/mnt/user-data/outputs/charts/a.png" {
		t.Errorf("files = %+v", files)
	}
	f, err := files[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "%PDF-1.7" {
		t.Errorf("Open read %q", b)
	}
	// A file swapped for a link out of outputs after presenting is refused.
	os.Remove(filepath.Join(out, "report.pdf"))
	if err := os.Symlink("/etc/passwd", filepath.Join(out, "report.pdf")); err != nil {
		t.Fatal(err)
	}
	if f, err := files[0].Open(); err == nil {
		f.Close()
		t.Error("Open followed a link out of outputs")
	}

	events = nil
	for _, tt := range []struct {
		paths []string
		want  string
	}{
		{[]string{"/mnt/user-data/workspace/draft.md"}, "/mnt/user-data/workspace/draft.md is not under /mnt/user-data/outputs; copy it there first"},
		{[]string{"/mnt/user-data/uploads/in.csv"}, "is not under /mnt/user-data/outputs"},
		{[]string{"draft.md"}, "is not under /mnt/user-data/outputs"},
		{[]string{"/mnt/user-data/outputs/../workspace/draft.md"}, "'..'"},
		{[]string{"/mnt/user-data/outputs"}, "is not under"},
		{[]string{"/mnt/user-data/outputs/charts"}, "is a directory"},
		{[]string{"/mnt/user-data/outputs/missing.txt"}, "/mnt/user-data/outputs/missing.txt does not exist"},
		{[]string{"/mnt/user-data/outputs/report.pdf"}, "leads outside the sandbox"},
		{[]string{"/etc/passwd"}, "outside the sandbox"},
		{[]string{out + "/charts/a.png"}, "outside the sandbox"},
		{[]string{"/mnt/user-data/outputs/charts/a.png", "/mnt/user-data/workspace/draft.md"}, "no files were presented"},
		{nil, "missing required argument(s): filepaths"},
		{[]string{}, "filepaths is empty"},
	} {
		_, err := run(tt.paths...)
		if tt.paths != nil && len(tt.paths) == 0 {
			args, _ := json.Marshal(map[string]any{"filepaths": []string{}})
			_, err = tools.NewRegistry(m.Tools()...).Call(ctx, "present_files", args)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("present %q: err = %v, want %q", tt.paths, err, tt.want)
		}
		if err != nil {
			noHostPath(t, err.Error(), m.dataDir)
		}
	}
	if len(events) != 0 {
		t.Errorf("refused calls emitted %+v", events)
	}
}

// TestReplacedDirs replaces outputs and uploads with links out of the
// thread, as a command in the sandbox could: presenting, opening presented
// files and saving uploads must not follow them.
func TestReplacedDirs(t *testing.T) {
	m := newManager(t, Options{})
	outside := t.TempDir()
	writeHost(t, filepath.Join(outside, "secret.txt"), "TOPSECRET")
	out := hostDir(t, m, "t", "outputs")
	writeHost(t, filepath.Join(out, "r.txt"), "report")
	var presented []event.File
	ctx := tools.WithEnv(context.Background(), &tools.Env{ThreadID: "t", Emit: func(ev event.Event) { presented = ev.(event.FilesPresented).Files }})
	args, _ := json.Marshal(map[string]any{"filepaths": []string{"/mnt/user-data/outputs/r.txt"}})
	if _, err := tools.NewRegistry(m.Tools()...).Call(ctx, "present_files", args); err != nil || len(presented) != 1 {
		t.Fatalf("present: %v", err)
	}

	up := hostDir(t, m, "t", "uploads")
	for dir, target := range map[string]string{out: outside, up: outside} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, dir); err != nil {
			t.Fatal(err)
		}
	}
	if f, err := presented[0].Open(); err == nil {
		f.Close()
		t.Error("Open followed a replaced outputs directory")
	}
	for _, p := range []string{"/mnt/user-data/outputs/secret.txt", "/mnt/user-data/uploads/secret.txt"} {
		if got, err := call(t, m, "t", "read_file", map[string]any{"path": p}); err == nil {
			t.Errorf("read %s through a link = %q", p, got)
		}
		if _, err := call(t, m, "t", "present_files", map[string]any{"filepaths": []string{p}}); err == nil {
			t.Errorf("presented %s through a link", p)
		}
	}
	if _, err := m.SaveUpload("t", "new.txt", strings.NewReader("x"), 0); err == nil {
		t.Error("saved an upload through a link")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("files appeared outside: %v", entries)
	}
	// The thread still works.
	if _, err := call(t, m, "t", "write_file", map[string]any{"path": "ok.txt", "content": "x"}); err != nil {
		t.Error(err)
	}
}

func isFiles(ev event.Event) bool {
	_, ok := ev.(event.FilesPresented)
	return ok
}
