package gateway

import (
	"bytes"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deerflow/deerflow/sandbox"
)

// activeTypes are served only as downloads: opened inline on the API's
// origin they could run script.
var activeTypes = map[string]bool{
	"text/html": true, "application/xhtml+xml": true, "image/svg+xml": true,
	"text/xml": true, "application/xml": true, "text/javascript": true, "application/javascript": true,
}

// artifact answers GET /api/threads/{id}/artifacts/{virtual path}: a file
// of the thread's outputs (/mnt/user-data/outputs/...) or uploads
// (/mnt/user-data/uploads/<name>), opened by the sandbox under the
// thread's own directory (an os.Root: no "..", absolute path or link
// leads out of it). ?download=true serves it as an attachment; byte
// ranges are honoured. The workspace and other mounts are not served.
func (g *Gateway) artifact(w http.ResponseWriter, r *http.Request) {
	id, raw := r.PathValue("id"), r.PathValue("path")
	vpath := "/" + raw
	if g.o.Files == nil {
		fail(w, http.StatusNotFound, "Thread files are not available.")
		return
	}
	if path.Clean(vpath) != vpath || strings.ContainsAny(raw, "\\\x00") {
		fail(w, http.StatusBadRequest, "Invalid artifact path: "+raw)
		return
	}
	var (
		rc   io.ReadCloser
		name string
		err  error
	)
	switch {
	case strings.HasPrefix(vpath, sandbox.Outputs+"/"):
		rc, name, err = g.output(id, vpath)
	case strings.HasPrefix(vpath, sandbox.Uploads+"/"):
		rc, err = g.o.Files.OpenUpload(id, vpath)
		name = path.Base(vpath)
	default:
		fail(w, http.StatusNotFound, "Artifact not found: "+raw+" (only "+sandbox.Outputs+" and "+sandbox.Uploads+" are served)")
		return
	}
	if err != nil {
		fail(w, http.StatusNotFound, "Artifact not found: "+raw)
		return
	}
	defer rc.Close()
	serveFile(w, r, name, rc)
}

// output opens a file of the thread's outputs, checked as a presented one.
func (g *Gateway) output(id, vpath string) (io.ReadCloser, string, error) {
	f, err := g.o.Files.Reopen(id, vpath)
	if err != nil {
		return nil, "", err
	}
	rc, err := f.Open()
	return rc, f.Name, err
}

// serveFile writes an opened file with its type and disposition.
func serveFile(w http.ResponseWriter, r *http.Request, name string, rc io.ReadCloser) {
	rs, seekable := rc.(io.ReadSeeker)
	var head []byte
	if !seekable {
		data, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		if err != nil {
			fail(w, http.StatusInternalServerError, "The file could not be read.")
			return
		}
		rs = bytes.NewReader(data)
	}
	head = make([]byte, 8192)
	n, _ := io.ReadFull(rs, head)
	head = head[:n]
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		fail(w, http.StatusInternalServerError, "The file could not be read.")
		return
	}
	ctype := contentType(name, head)
	base, _, _ := mime.ParseMediaType(ctype)
	disp := "inline"
	if r.URL.Query().Get("download") == "true" || activeTypes[base] {
		disp = "attachment"
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": name}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-cache")
	var mod time.Time
	if st, ok := rc.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			mod = fi.ModTime()
		}
	}
	http.ServeContent(w, r, "", mod, rs)
}

// contentType is a file's media type by its name, else by its first bytes:
// text (no NUL, valid UTF-8) or binary.
func contentType(name string, head []byte) string {
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(name))); t != "" {
		return t
	}
	if !bytes.Contains(head, []byte{0}) && validPrefix(head) {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// validPrefix reports whether head is UTF-8, but for a rune cut at its
// end.
func validPrefix(head []byte) bool {
	for cut := 0; cut < utf8.UTFMax && cut <= len(head); cut++ {
		if utf8.Valid(head[:len(head)-cut]) {
			return true
		}
	}
	return false
}
