package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestListUploadedFiles: list_uploaded_files shows each upload with its
// size, type, time and Markdown version; a conversion is listed with its
// original, not on its own.
func TestListUploadedFiles(t *testing.T) {
	m := newManager(t, Options{})
	if out, err := call(t, m, "t1", "list_uploaded_files", struct{}{}); err != nil || out != "No files have been uploaded in this conversation." {
		t.Fatalf("empty: %q, %v", out, err)
	}
	pdf, err := m.SaveUpload("t1", "report.pdf", strings.NewReader("%PDF-1.7 ..."), 0)
	if err != nil {
		t.Fatal(err)
	}
	md, err := m.SaveBeside("t1", pdf, ConvertedSuffix, "# Report\n")
	if err != nil || md != "/mnt/user-data/uploads/report.pdf.md" {
		t.Fatalf("SaveBeside = %q, %v", md, err)
	}
	if _, err := m.SaveUpload("t1", "notes.md", strings.NewReader("mine"), 0); err != nil {
		t.Fatal(err)
	}
	out, err := call(t, m, "t1", "list_uploaded_files", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^2 uploaded file\(s\) in /mnt/user-data/uploads:
- /mnt/user-data/uploads/report.pdf \(PDF document, 12 B, uploaded \d{4}-\d\d-\d\d \d\d:\d\d UTC\); Markdown: /mnt/user-data/uploads/report.pdf.md
- /mnt/user-data/uploads/notes.md \(Markdown, 4 B, uploaded .* UTC\)
$`)
	if !want.MatchString(out) {
		t.Errorf("listed:\n%s", out)
	}
	// A second conversion of the same name does not overwrite the first.
	if md2, _ := m.SaveBeside("t1", pdf, ConvertedSuffix, "again"); md2 != "/mnt/user-data/uploads/report.pdf (1).md" {
		t.Errorf("second SaveBeside = %q", md2)
	}
}

// TestOpenUploadRefusesLinksAndPaths: only a regular file directly in the
// thread's uploads opens; a link a command left there (to a host file)
// and paths elsewhere are refused.
func TestOpenUploadRefusesLinksAndPaths(t *testing.T) {
	m := newManager(t, Options{})
	if _, err := m.SaveUpload("t1", "a.txt", strings.NewReader("x"), 0); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(m.threadsDir, "t1", "user-data", "uploads")
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("host"), 0o600)
	if err := os.Symlink(secret, filepath.Join(dir, "link.pdf")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/mnt/user-data/uploads/link.pdf", "/mnt/user-data/uploads/../outputs/x", "/mnt/user-data/workspace/a.txt", "/mnt/user-data/uploads/"} {
		if f, err := m.OpenUpload("t1", p); err == nil {
			f.Close()
			t.Errorf("%s opened", p)
		}
	}
	f, err := m.OpenUpload("t1", "/mnt/user-data/uploads/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := m.SaveBeside("t1", "/mnt/user-data/uploads/../../etc/passwd", ".md", "x"); err == nil {
		t.Error("SaveBeside wrote outside the uploads")
	}
}
