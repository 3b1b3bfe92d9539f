package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/deerflow/deerflow/sandbox/files"
	"github.com/deerflow/deerflow/tools"
)

// ConvertedSuffix is added to an upload's name for its Markdown version:
// report.pdf → report.pdf.md.
const ConvertedSuffix = ".md"

// uploadName is the name inside uploads of a virtual path in it.
func uploadName(vpath string) (string, error) {
	name, ok := strings.CutPrefix(vpath, Uploads+"/")
	if !ok || name == "" || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("sandbox: %q is not a file in %s", vpath, Uploads)
	}
	return name, nil
}

// OpenUpload opens a saved upload for reading. It opens only a regular
// file inside the thread's uploads: a link or a device put there by a
// command is refused.
func (m *Manager) OpenUpload(threadID, vpath string) (*os.File, error) {
	name, err := uploadName(vpath)
	if err != nil {
		return nil, err
	}
	t, err := m.thread(threadID)
	if err != nil {
		return nil, err
	}
	root, err := openSub(t.userData, "uploads")
	if err != nil {
		return nil, fmt.Errorf("sandbox: open upload: %w", err)
	}
	defer root.Close()
	if st, err := root.Lstat(name); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("sandbox: %s is not a regular file", vpath)
	}
	return root.Open(name)
}

// SaveBeside writes text as a new file next to the upload vpath, named
// after it with suffix ("report.pdf.md"; "report.pdf (1).md" when that
// name is taken), and returns its virtual path.
func (m *Manager) SaveBeside(threadID, vpath, suffix, text string) (string, error) {
	name, err := uploadName(vpath)
	if err != nil {
		return "", err
	}
	t, err := m.thread(threadID)
	if err != nil {
		return "", err
	}
	root, err := openSub(t.userData, "uploads")
	if err != nil {
		return "", fmt.Errorf("sandbox: save beside: %w", err)
	}
	defer root.Close()
	f, saved, err := claim(root, name+suffix)
	if err != nil {
		return "", fmt.Errorf("sandbox: save beside %q: %w", name, err)
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(saved)
		return "", fmt.Errorf("sandbox: save beside %q: %w", name, err)
	}
	return Uploads + "/" + saved, nil
}

// UploadInfo describes one file in a thread's uploads.
type UploadInfo struct {
	Path     string // virtual path
	Size     int64
	Type     string // "PDF document", "image", ...
	Time     time.Time
	Markdown string // virtual path of its Markdown version, "" if none
}

// ListUploads lists the regular files in a thread's uploads, oldest
// first; a Markdown version ("x.pdf.md") is listed with its original,
// not on its own.
func (m *Manager) ListUploads(threadID string) ([]UploadInfo, error) {
	t, err := m.thread(threadID)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(t.userData, "uploads"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("the uploads could not be listed")
	}
	have := map[string]bool{}
	var list []UploadInfo
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		have[e.Name()] = true
		list = append(list, UploadInfo{Path: Uploads + "/" + e.Name(), Size: info.Size(), Type: fileType(e.Name()), Time: info.ModTime()})
	}
	list = slices.DeleteFunc(list, func(u UploadInfo) bool {
		orig, ok := strings.CutSuffix(filepath.Base(u.Path), ConvertedSuffix)
		return ok && have[orig] && fileType(orig) != fileType(u.Path)
	})
	for i := range list {
		if md := filepath.Base(list[i].Path) + ConvertedSuffix; have[md] && fileType(list[i].Path) != "Markdown" {
			list[i].Markdown = Uploads + "/" + md
		}
	}
	slices.SortStableFunc(list, func(a, b UploadInfo) int { return a.Time.Compare(b.Time) })
	return list, nil
}

// fileTypes names a file's type by its extension, for the model.
var fileTypes = map[string]string{
	".pdf": "PDF document", ".docx": "Word document", ".doc": "Word document (old format)",
	".xlsx": "Excel spreadsheet", ".xls": "Excel spreadsheet (old format)", ".csv": "CSV table", ".tsv": "TSV table",
	".pptx": "PowerPoint presentation", ".html": "web page", ".htm": "web page", ".md": "Markdown",
	".txt": "text", ".json": "JSON", ".png": "image", ".jpg": "image", ".jpeg": "image", ".gif": "image",
	".webp": "image", ".ogg": "audio", ".oga": "audio", ".opus": "audio", ".mp3": "audio", ".m4a": "audio",
	".wav": "audio", ".zip": "zip archive",
}

func fileType(name string) string {
	if t, ok := fileTypes[strings.ToLower(filepath.Ext(name))]; ok {
		return t
	}
	return "file"
}

// listUploadsTool is list_uploaded_files.
func (m *Manager) listUploadsTool() tools.Tool {
	return tool(m, "list_uploaded_files",
		"List every file the user has uploaded in this conversation: path, size, type, when it arrived, and the path of its Markdown version where a document (PDF, Word, Excel, PowerPoint, CSV, HTML) was converted. Read the Markdown version with read_file.",
		func(ctx context.Context, t *thread, _ struct{}) (string, error) {
			list, err := m.ListUploads(t.id)
			if err != nil {
				return "", err
			}
			if len(list) == 0 {
				return "No files have been uploaded in this conversation.", nil
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d uploaded file(s) in %s:\n", len(list), Uploads)
			for _, u := range list {
				fmt.Fprintf(&b, "- %s (%s, %s, uploaded %s)", tools.EscapeLine(u.Path), u.Type, files.Size(u.Size), u.Time.UTC().Format("2006-01-02 15:04 UTC"))
				if u.Markdown != "" {
					fmt.Fprintf(&b, "; Markdown: %s", tools.EscapeLine(u.Markdown))
				}
				b.WriteString("\n")
			}
			return b.String(), nil
		})
}
