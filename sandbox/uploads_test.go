package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSanitizeName(t *testing.T) {
	long := strings.Repeat("é", 150) + ".pdf" // 304 bytes
	tests := []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../etc/passwd", "passwd"},
		{`C:\Users\ann\Desktop\q3 plan.xlsx`, "q3 plan.xlsx"},
		{".bashrc", "bashrc"},
		{"...", "file"},
		{"", "file"},
		{"  spaced.txt  ", "spaced.txt"},
		{"bad\x00na\nme\x1b.txt", "badname.txt"},
		{"invoice\u202Efdp.exe", "invoicefdp.exe"},
		{"отчёт 2026.docx", "отчёт 2026.docx"},
		{"图表.png", "图表.png"},
		{"bad\xffutf8.txt", "badutf8.txt"},
		{long, strings.Repeat("é", 98) + ".pdf"},
	}
	for _, tt := range tests {
		if got := sanitizeName(tt.in); got != tt.want {
			t.Errorf("sanitizeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSaveUpload(t *testing.T) {
	m := newManager(t, Options{})
	up := hostDir(t, m, "t", "uploads")
	for i, want := range []string{"/mnt/user-data/uploads/report.pdf", "/mnt/user-data/uploads/report (1).pdf", "/mnt/user-data/uploads/report (2).pdf"} {
		got, err := m.SaveUpload("t", "../report.pdf", strings.NewReader("pdf"+string(rune('0'+i))), 100)
		if err != nil || got != want {
			t.Errorf("upload %d = %q, %v; want %q", i, got, err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(up, "report (1).pdf")); string(b) != "pdf1" {
		t.Errorf("report (1).pdf = %q", b)
	}
	if got, err := m.SaveUpload("t", ".env", strings.NewReader("x"), 0); err != nil || got != "/mnt/user-data/uploads/env" {
		t.Errorf("dotfile = %q, %v", got, err)
	}
	// The model reads what was uploaded through the virtual path.
	if got := mustCall(t, m, "t", "read_file", map[string]any{"path": "/mnt/user-data/uploads/report (2).pdf"}); got != "pdf2" {
		t.Errorf("read upload = %q", got)
	}

	_, err := m.SaveUpload("t", "big.bin", strings.NewReader(strings.Repeat("x", 3<<20)), 2<<20)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "larger than the upload limit of 2.0 MB") {
		t.Errorf("too large: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(up, "big.bin")); !os.IsNotExist(err) {
		t.Errorf("partial upload left behind: %v", err)
	}
	if got, err := m.SaveUpload("t", "exact.bin", strings.NewReader(strings.Repeat("x", 1024)), 1024); err != nil || got != "/mnt/user-data/uploads/exact.bin" {
		t.Errorf("exactly at the limit = %q, %v", got, err)
	}
	if _, err := m.SaveUpload("../x", "a.txt", strings.NewReader("x"), 0); err == nil {
		t.Error("accepted a bad thread id")
	}
}

func TestUploadsNote(t *testing.T) {
	if UploadsNote(nil) != "" {
		t.Error("note for no files")
	}
	got := UploadsNote([]string{"/mnt/user-data/uploads/a.pdf", "/mnt/user-data/uploads/b (1).csv"})
	for _, want := range []string{"<uploaded_files>", "- /mnt/user-data/uploads/a.pdf\n- /mnt/user-data/uploads/b (1).csv\n", "read_file", "</uploaded_files>"} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q:\n%s", want, got)
		}
	}
}

func TestPromptSection(t *testing.T) {
	m := newManager(t, Options{SkillsDir: t.TempDir(), Mounts: []Mount{{HostPath: t.TempDir(), Path: "/mnt/data", ReadOnly: true}}})
	got := m.PromptSection()
	for _, want := range []string{
		"/mnt/user-data/workspace", "/mnt/user-data/uploads", "/mnt/user-data/outputs", "present_files",
		"/mnt/skills (read-only)", "/mnt/data (read-only)", "str_replace", "append=true",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	noHostPath(t, got, m.dataDir, m.skillsDir)
}
