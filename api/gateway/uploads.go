package gateway

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/deerflow/deerflow/sandbox"
)

// maxFiles is how many files one upload request may carry (DeerFlow's
// default).
const maxFiles = 10

// multipartSlack is what the multipart framing of a request may take
// beyond the files themselves.
const multipartSlack = 16 << 10

// fileJSON is DeerFlow's UploadedFileInfo (frontend core/uploads/api.ts).
// Paths are virtual: path is the virtual path too (DeerFlow's is the host
// path in its local sandbox; deerflow never shows host paths).
type fileJSON struct {
	Filename            string  `json:"filename"`
	Size                int64   `json:"size"`
	Path                string  `json:"path"`
	VirtualPath         string  `json:"virtual_path"`
	ArtifactURL         string  `json:"artifact_url"`
	Extension           string  `json:"extension"`
	Modified            float64 `json:"modified"`
	OriginalFilename    string  `json:"original_filename,omitempty"`
	MarkdownFile        string  `json:"markdown_file,omitempty"`
	MarkdownPath        string  `json:"markdown_path,omitempty"`
	MarkdownVirtualPath string  `json:"markdown_virtual_path,omitempty"`
	MarkdownArtifactURL string  `json:"markdown_artifact_url,omitempty"`
	// Notice says why a document could not be converted (deerflow's).
	Notice string `json:"notice,omitempty"`
}

// limitsJSON is DeerFlow's UploadLimits.
type limitsJSON struct {
	MaxFiles     int   `json:"max_files"`
	MaxFileSize  int64 `json:"max_file_size"`
	MaxTotalSize int64 `json:"max_total_size"`
}

// limits are the upload limits: sandbox.max_upload_mb per file, and never
// more than the API takes in one request body.
func (g *Gateway) limits() limitsJSON {
	total := g.o.MaxBody
	if total > 4*multipartSlack {
		total -= multipartSlack
	}
	file := int64(g.o.Config.Sandbox.MaxUploadMB) << 20
	if file <= 0 || file > total {
		file = total
	}
	return limitsJSON{MaxFiles: maxFiles, MaxFileSize: file, MaxTotalSize: total}
}

// artifactURL is where the UI fetches a thread's file.
func artifactURL(threadID, vpath string) string {
	dir, name := path.Split(vpath)
	return "/api/threads/" + url.PathEscape(threadID) + "/artifacts" + dir + url.PathEscape(name)
}

func fileOf(threadID string, u sandbox.UploadInfo) fileJSON {
	name := path.Base(u.Path)
	j := fileJSON{Filename: name, Size: u.Size, Path: u.Path, VirtualPath: u.Path,
		ArtifactURL: artifactURL(threadID, u.Path), Extension: path.Ext(name),
		Modified: float64(u.Time.UnixMilli()) / 1000}
	if u.Markdown != "" {
		j.MarkdownFile = path.Base(u.Markdown)
		j.MarkdownPath, j.MarkdownVirtualPath = u.Markdown, u.Markdown
		j.MarkdownArtifactURL = artifactURL(threadID, u.Markdown)
	}
	return j
}

// uploadsOf lists a thread's uploads by virtual path; false after
// answering.
func (g *Gateway) uploadsOf(w http.ResponseWriter, threadID string) ([]sandbox.UploadInfo, bool) {
	if g.o.Files == nil {
		fail(w, http.StatusServiceUnavailable, "Thread files are not available.")
		return nil, false
	}
	list, err := g.o.Files.ListUploads(threadID)
	if err != nil {
		fail(w, http.StatusBadRequest, "Invalid thread id or unreadable uploads: "+err.Error())
		return nil, false
	}
	return list, true
}

// listUploads answers GET /api/threads/{id}/uploads/list.
func (g *Gateway) listUploads(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	list, ok := g.uploadsOf(w, id)
	if !ok {
		return
	}
	files := make([]fileJSON, 0, len(list))
	for _, u := range list {
		files = append(files, fileOf(id, u))
	}
	reply(w, http.StatusOK, map[string]any{"files": files, "count": len(files)})
}

// uploadLimits answers GET /api/threads/{id}/uploads/limits.
func (g *Gateway) uploadLimits(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, g.limits())
}

// deleteUpload answers DELETE /api/threads/{id}/uploads/{filename}: the
// file and its Markdown version.
func (g *Gateway) deleteUpload(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("id"), r.PathValue("filename")
	if g.o.Files == nil {
		fail(w, http.StatusServiceUnavailable, "Thread files are not available.")
		return
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		fail(w, http.StatusBadRequest, "Invalid path")
		return
	}
	err := g.o.Files.RemoveUpload(id, sandbox.Uploads+"/"+name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fail(w, http.StatusNotFound, "File not found: "+name)
	case err != nil:
		g.log.Warn("deleting an upload", "thread", id, "err", err)
		fail(w, http.StatusBadRequest, "Could not delete "+name)
	default:
		reply(w, http.StatusOK, map[string]any{"success": true, "message": "Deleted " + name})
	}
}

// counter counts what is read through it and keeps the first error.
type counter struct {
	r   io.Reader
	n   int64
	err error
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// bodyStatus is the answer to a request body that could not be read.
func (g *Gateway) bodyStatus(err error) (int, string) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("Total upload size too large: this API takes at most %d bytes per request", tooBig.Limit)
	}
	return http.StatusBadRequest, "The upload could not be read: " + err.Error()
}

// saved is one file of an upload request, taken in.
type saved struct {
	path, original, notice string
	size                   int64
}
