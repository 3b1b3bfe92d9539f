package gateway

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path"
	"strings"

	"github.com/deerflow/deerflow/bus"
)

// upload answers POST /api/threads/{id}/uploads: multipart/form-data with
// one or more "files" parts. Each is saved into the thread's uploads by
// the intake (a taken name gets " (1)"; a document is converted to
// Markdown beside it, "report.pdf.md"). A request that fails part way
// leaves nothing of itself behind.
func (g *Gateway) upload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if g.o.Intake == nil {
		fail(w, http.StatusServiceUnavailable, "Uploads are not available.")
		return
	}
	if _, ok := g.uploadsOf(w, id); !ok { // checks the thread id
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		fail(w, http.StatusBadRequest, "The body must be multipart/form-data with the files as \"files\".")
		return
	}
	got, status, msg := g.takeParts(r, id, mr)
	if status != 0 {
		for _, s := range got {
			g.o.Files.RemoveUpload(id, s.path)
		}
		fail(w, status, msg)
		return
	}
	g.uploaded(w, id, got)
}

// takeParts saves every file part; a status and message when the request
// is refused (what it saved so far is the caller's to remove).
func (g *Gateway) takeParts(r *http.Request, id string, mr *multipart.Reader) (got []saved, status int, msg string) {
	lim := g.limits()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			status, msg = g.bodyStatus(err)
			return got, status, msg
		}
		if part.FormName() != "files" || part.FileName() == "" {
			part.Close()
			continue
		}
		if len(got) == lim.MaxFiles {
			return got, http.StatusRequestEntityTooLarge, fmt.Sprintf("Too many files: maximum is %d", lim.MaxFiles)
		}
		s, status, msg := g.takePart(r, id, part, lim)
		if status != 0 {
			return got, status, msg
		}
		got = append(got, s)
	}
	if len(got) == 0 {
		return nil, http.StatusBadRequest, "No files provided"
	}
	return got, 0, ""
}

// takePart saves one file part through the intake.
func (g *Gateway) takePart(r *http.Request, id string, part *multipart.Part, lim limitsJSON) (saved, int, string) {
	defer part.Close()
	name := part.FileName()
	c := &counter{r: part}
	at := bus.Attachment{Name: name, Size: -1, MIME: part.Header.Get("Content-Type"),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(c), nil }}
	s, err := g.o.Intake.Save(r.Context(), id, at)
	switch {
	case c.err != nil:
		status, msg := g.bodyStatus(c.err)
		if s.Path != "" {
			g.o.Files.RemoveUpload(id, s.Path)
		}
		return saved{}, status, msg
	case err != nil && c.n > lim.MaxFileSize:
		return saved{}, http.StatusRequestEntityTooLarge, "File too large: " + name
	case err != nil:
		return saved{}, http.StatusBadRequest, name + ": " + err.Error()
	}
	return saved{path: s.Path, original: name, notice: s.Notice, size: c.n}, 0, ""
}

// uploaded answers with DeerFlow's UploadResponse for the saved files.
func (g *Gateway) uploaded(w http.ResponseWriter, id string, got []saved) {
	list, _ := g.o.Files.ListUploads(id)
	files := make([]fileJSON, 0, len(got))
	var notices []string
	for _, s := range got {
		j := fileJSON{Filename: path.Base(s.path), Size: s.size, Path: s.path, VirtualPath: s.path,
			ArtifactURL: artifactURL(id, s.path), Extension: path.Ext(s.path)}
		for _, u := range list {
			if u.Path == s.path {
				j = fileOf(id, u)
			}
		}
		if j.Filename != s.original {
			j.OriginalFilename = s.original
		}
		if j.Notice = s.notice; s.notice != "" {
			notices = append(notices, s.notice)
		}
		files = append(files, j)
	}
	msg := fmt.Sprintf("Successfully uploaded %d file(s)", len(files))
	if len(notices) > 0 {
		msg += "; " + strings.Join(notices, "; ")
	}
	reply(w, http.StatusOK, map[string]any{"success": true, "files": files, "message": msg, "skipped_files": []string{}})
}
