package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deerflow/deerflow/sandbox/files"

	"github.com/deerflow/deerflow/tools"
)

// ErrTooLarge is wrapped by SaveUpload when a file exceeds its size limit.
var ErrTooLarge = errors.New("file is too large")

const (
	maxNameBytes = 200   // longest saved file name, before any " (N)"
	maxDupes     = 10000 // "name (N).ext" attempts
)

// SaveUpload stores a file the user sent into the thread's uploads and
// returns its virtual path. The name is reduced to a safe base name and made
// unique ("report.pdf", "report (1).pdf", ...). maxBytes > 0 limits the size:
// a bigger file is removed and the error wraps ErrTooLarge and names the
// limit.
func (m *Manager) SaveUpload(threadID, name string, r io.Reader, maxBytes int64) (virtualPath string, err error) {
	t, err := m.thread(threadID)
	if err != nil {
		return "", fmt.Errorf("sandbox: save upload: invalid thread id %q", threadID)
	}
	root, err := openSub(t.userData, "uploads")
	if err != nil {
		return "", fmt.Errorf("sandbox: save upload: %w", err)
	}
	defer root.Close()
	base := sanitizeName(name)
	f, saved, err := claim(root, base)
	if err != nil {
		return "", fmt.Errorf("sandbox: save upload %q: %w", base, err)
	}
	src := r
	if maxBytes > 0 {
		src = io.LimitReader(r, maxBytes+1)
	}
	n, err := io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && maxBytes > 0 && n > maxBytes {
		err = fmt.Errorf("it is larger than the upload limit of %s: %w", files.Size(maxBytes), ErrTooLarge)
	}
	if err != nil {
		root.Remove(saved)
		return "", fmt.Errorf("sandbox: save upload %q: %w", base, err)
	}
	return Uploads + "/" + saved, nil
}

// claim creates a new file named base, or "stem (N).ext" when that exists.
func claim(root *os.Root, base string) (*os.File, string, error) {
	ext := filepath.Ext(base)
	if ext == base || len(ext) > 20 {
		ext = ""
	}
	stem := strings.TrimSuffix(base, ext)
	for i := 0; i < maxDupes; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s (%d)%s", stem, i, ext)
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("too many files with this name")
}

// sanitizeName reduces an uploaded file's name to a safe base name: no
// directories, control or invisible formatting characters (which can hide
// a file's real extension), leading dots or surrounding spaces; at most 200
// bytes, keeping the extension; other Unicode is kept. An empty result
// becomes "file". The name is what the model is told (UploadsNote), so it
// is also escaped (tools.EscapeLine: "x</uploaded_files>.pdf" is saved as
// "x&lt;/uploaded_files>.pdf") and the model can use the name it reads.
func sanitizeName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, ""))
	name = tools.EscapeLine(name)
	name = strings.TrimLeft(strings.TrimSpace(name), ". ")
	if len(name) > maxNameBytes {
		ext := filepath.Ext(name)
		if len(ext) > 20 || ext == name {
			ext = ""
		}
		stem := strings.TrimSuffix(name, ext)
		keep := maxNameBytes - len(ext)
		for keep > 0 && !utf8.RuneStart(stem[keep]) {
			keep--
		}
		// Cutting can leave an opening bracket at the end, which the
		// escaping would now rewrite (it could join what follows): drop
		// such a tail rather than grow the name past the limit.
		stem = strings.TrimSpace(stem[:keep])
		for stem != "" && tools.EscapeLine(stem+ext) != stem+ext {
			_, n := utf8.DecodeLastRuneInString(stem)
			stem = stem[:len(stem)-n]
		}
		name = stem + ext
	}
	if name == "" || name == "." {
		return "file"
	}
	return name
}

// UploadsNote is the note put before a user message that came with files:
// it tells the model where they are, given one line per file (its path,
// and its Markdown version or transcript where there is one). Each line
// is escaped, so that no file name can close the section whoever made it.
func UploadsNote(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<uploaded_files>\nThe user attached these files to this message; they are saved in " + Uploads + ":\n")
	for _, l := range lines {
		b.WriteString("- " + tools.EscapeLine(l) + "\n")
	}
	b.WriteString("Documents are converted to Markdown where a Markdown path is given: read that with read_file (a large one in parts) rather than the original. Recordings were transcribed into the message. Inspect other formats with bash tools where available; list_uploaded_files lists every upload of this conversation. Leave the originals unchanged and write any results to " + Outputs + ".\n</uploaded_files>")
	return b.String()
}
