package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/tools"
)

// a 1x1 PNG
var onePixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

func TestViewImage(t *testing.T) {
	m := newManager(t, Options{})
	up := hostDir(t, m, "a", "uploads")
	writeHost(t, filepath.Join(up, "dot.png"), string(onePixel))
	writeHost(t, filepath.Join(up, "notes.txt"), "just text")
	big := make([]byte, maxImage+1)
	copy(big, onePixel)
	os.WriteFile(filepath.Join(up, "big.png"), big, 0o644)

	var got []string
	view := func(path string, attach func(string, []byte)) (string, error) {
		ctx := tools.WithEnv(context.Background(), &tools.Env{ThreadID: "a", Attach: attach})
		raw, _ := json.Marshal(map[string]string{"path": path})
		return tools.NewRegistry(m.Tools()...).Call(ctx, "view_image", raw)
	}
	attach := func(mime string, data []byte) { got = append(got, mime) }
	out, err := view("/mnt/user-data/uploads/dot.png", attach)
	if err != nil || !strings.Contains(out, "Attached /mnt/user-data/uploads/dot.png (image/png") || len(got) != 1 || got[0] != "image/png" {
		t.Fatalf("view = %q %v, attached %v", out, err, got)
	}
	for path, want := range map[string]string{
		"/mnt/user-data/uploads/notes.txt": "is not a PNG, JPEG, GIF or WebP image",
		"/mnt/user-data/uploads/big.png":   "images up to 5 MB",
		"/mnt/user-data/uploads":           "is a directory",
		"/etc/passwd":                      "outside",
	} {
		if _, err := view(path, attach); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if _, err := view("/mnt/user-data/uploads/dot.png", nil); err == nil || !strings.Contains(err.Error(), "cannot see images") {
		t.Errorf("without vision: %v", err)
	}
	if len(got) != 1 {
		t.Errorf("attached %d images, want 1", len(got))
	}
}
