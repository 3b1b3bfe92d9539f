package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// Deleting a thread through the API removes its workspace, uploads and
// outputs from disk (<data_dir>/threads/<id>/), and only its own.
func TestAPIDeleteThreadRemovesItsFiles(t *testing.T) {
	model, cfg, c, cancel, done := serveAPIInProcess(t)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	write := func(thread string) string {
		args, _ := json.Marshal(map[string]string{"description": "write", "path": "/mnt/user-data/outputs/report.md", "content": "# Report\n"})
		model.Script(
			fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: string(args)}}},
			fakeopenai.Turn{Text: "Written."},
		)
		ended(t, c.stream(thread, c.run(thread, "write a report")).rest(), "success")
		p := filepath.Join(cfg.DataDir, "threads", thread, "user-data", "outputs", "report.md")
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the run wrote no file: %v", err)
		}
		return p
	}
	gone, kept := c.thread(), c.thread()
	write(gone)
	other := write(kept)

	if code, body := c.do("DELETE", "/api/threads/"+gone, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, body)
	}
	if _, err := os.Lstat(filepath.Join(cfg.DataDir, "threads", gone)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the deleted thread's files are still on disk: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another thread's file went too: %v", err)
	}
}
