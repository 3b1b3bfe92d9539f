package gateway

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const thread = "3f1c9a52-6a7e-4d0b-9d3e-1f2a3b4c5d6e"

// multipartBody is a form with one "files" part per name → content.
func multipartBody(t *testing.T, files ...[2]string) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range files {
		w, err := mw.CreateFormFile("files", f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	mw.Close()
	return mw.FormDataContentType(), &buf
}

func (h *harness) upload(status int, files ...[2]string) map[string]any {
	h.t.Helper()
	ctype, body := multipartBody(h.t, files...)
	code, _, data := h.do("POST", "/api/threads/"+thread+"/uploads", ctype, body)
	if code != status {
		h.t.Fatalf("upload: %d %s, want %d", code, data, status)
	}
	return decode(h.t, data)
}

// TestGatewayUploads: a CSV and a text file through multipart: saved,
// the CSV converted with its Markdown path returned; listed; the limits;
// one deleted with its Markdown; a name taken twice kept apart.
func TestGatewayUploads(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	resp := h.upload(200, [2]string{"prices.csv", "item,price\nmilk,1.20\n"}, [2]string{"notes.txt", "hello"})
	hasKeys(t, "upload", resp, "success", "files", "message", "skipped_files")
	files := resp["files"].([]any)
	if resp["success"] != true || len(files) != 2 {
		t.Fatalf("upload %v", resp)
	}
	csv := hasKeys(t, "csv", files[0], "filename", "size", "path", "virtual_path", "artifact_url", "extension", "modified",
		"markdown_file", "markdown_path", "markdown_virtual_path", "markdown_artifact_url")
	want := map[string]any{
		"filename": "prices.csv", "virtual_path": "/mnt/user-data/uploads/prices.csv", "size": float64(21),
		"artifact_url":          "/api/threads/" + thread + "/artifacts/mnt/user-data/uploads/prices.csv",
		"markdown_file":         "prices.csv.md",
		"markdown_virtual_path": "/mnt/user-data/uploads/prices.csv.md",
		"markdown_artifact_url": "/api/threads/" + thread + "/artifacts/mnt/user-data/uploads/prices.csv.md",
	}
	for k, v := range want {
		if csv[k] != v {
			t.Errorf("csv %s = %v, want %v", k, csv[k], v)
		}
	}
	code, hdr, md := h.do("GET", csv["markdown_artifact_url"].(string), "", nil)
	if code != 200 || !strings.Contains(string(md), "| milk | 1.20 |") || !strings.HasPrefix(hdr.Get("Content-Type"), "text/") {
		t.Errorf("markdown artifact: %d %s %s", code, hdr.Get("Content-Type"), md)
	}
	if txt := files[1].(map[string]any); txt["markdown_file"] != nil || txt["filename"] != "notes.txt" {
		t.Errorf("txt %v", txt)
	}
	again := h.upload(200, [2]string{"notes.txt", "second"})["files"].([]any)[0].(map[string]any)
	if again["filename"] != "notes (1).txt" || again["original_filename"] != "notes.txt" {
		t.Errorf("second notes.txt %v", again)
	}
	list := h.json("GET", "/api/threads/"+thread+"/uploads/list", nil, 200)
	if list["count"] != float64(3) || len(list["files"].([]any)) != 3 {
		t.Errorf("list %v", list)
	}
	lim := hasKeys(t, "limits", h.json("GET", "/api/threads/"+thread+"/uploads/limits", nil, 200), "max_files", "max_file_size", "max_total_size")
	if lim["max_files"] != float64(10) || lim["max_file_size"].(float64) > 1<<20 || lim["max_total_size"].(float64) > 1<<20 {
		t.Errorf("limits %v", lim)
	}
	del := h.json("DELETE", "/api/threads/"+thread+"/uploads/prices.csv", nil, 200)
	if del["success"] != true {
		t.Errorf("delete %v", del)
	}
	if list := h.json("GET", "/api/threads/"+thread+"/uploads/list", nil, 200); list["count"] != float64(2) {
		t.Errorf("after delete %v", list)
	}
	h.json("GET", "/api/threads/"+thread+"/artifacts/mnt/user-data/uploads/prices.csv.md", nil, 404)
	h.json("DELETE", "/api/threads/"+thread+"/uploads/prices.csv", nil, 404)
	if code, _, _ := h.do("DELETE", "/api/threads/"+thread+"/uploads/..", "", nil); code != 400 && code != 404 { // the mux cleans the path
		t.Errorf("DELETE ..: %d", code)
	}
	h.json("DELETE", "/api/threads/"+thread+"/uploads/..%2Fx", nil, 400)
}

// TestGatewayUploadRefusals: no files, not multipart, too many, too
// large for the request limit (nothing of the request stays), a bad
// thread id.
func TestGatewayUploadRefusals(t *testing.T) {
	h := newHarness(t, testConfig(), 64<<10)
	h.upload(400)
	code, _, _ := h.do("POST", "/api/threads/"+thread+"/uploads", "application/json", strings.NewReader("{}"))
	if code != 400 {
		t.Errorf("json body: %d", code)
	}
	var many [][2]string
	for i := range 11 {
		many = append(many, [2]string{"f" + string(rune('a'+i)) + ".txt", "x"})
	}
	if d := h.upload(413, many...); !strings.Contains(d["detail"].(string), "Too many files") {
		t.Errorf("too many %v", d)
	}
	big := strings.Repeat("y", 80<<10)
	if d := h.upload(413, [2]string{"small.txt", "x"}, [2]string{"big.txt", big}); !strings.Contains(d["detail"].(string), "too large") {
		t.Errorf("too big %v", d)
	}
	if list := h.json("GET", "/api/threads/"+thread+"/uploads/list", nil, 200); list["count"] != float64(0) {
		t.Errorf("a refused request left files: %v", list)
	}
	ctype, body := multipartBody(t, [2]string{"a.txt", "x"})
	if code, _, _ := h.do("POST", "/api/threads/..bad/uploads", ctype, body); code != 400 {
		t.Errorf("bad thread id: %d", code)
	}
}

// TestGatewayArtifacts: outputs and uploads by virtual path with their
// type, ?download=true as an attachment, active content always one;
// traversal (.., encoded, absolute, workspace) and symlinks refused.
func TestGatewayArtifacts(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	if _, err := h.sb.SaveOutput(thread, "report.txt", []byte("the report")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sb.SaveOutput(thread, "page.html", []byte("<script>alert(1)</script>")); err != nil {
		t.Fatal(err)
	}
	base := "/api/threads/" + thread + "/artifacts"
	code, hdr, body := h.do("GET", base+"/mnt/user-data/outputs/report.txt", "", nil)
	if code != 200 || string(body) != "the report" || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") || !strings.HasPrefix(hdr.Get("Content-Disposition"), "inline") {
		t.Errorf("report: %d %v %s", code, hdr, body)
	}
	_, hdr, _ = h.do("GET", base+"/mnt/user-data/outputs/report.txt?download=true", "", nil)
	if cd := hdr.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, "report.txt") {
		t.Errorf("download: %q", cd)
	}
	_, hdr, _ = h.do("GET", base+"/mnt/user-data/outputs/page.html", "", nil)
	if !strings.HasPrefix(hdr.Get("Content-Disposition"), "attachment") || hdr.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("html served inline: %v", hdr)
	}
	req, _ := http.NewRequest("GET", h.srv.URL+base+"/mnt/user-data/outputs/report.txt", nil)
	req.Header.Set("Range", "bytes=4-9")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 206 {
		t.Errorf("range: %v %v", resp, err)
	}

	// A link in outputs and one in uploads, to a file outside the thread.
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("TOP SECRET"), 0o644)
	ud := userData(t, h)
	os.Symlink(secret, filepath.Join(ud, "outputs", "link.txt"))
	os.Symlink(secret, filepath.Join(ud, "uploads", "link.txt"))
	os.WriteFile(filepath.Join(ud, "workspace", "draft.txt"), []byte("draft"), 0o644)
	for path, want := range map[string]int{
		"/mnt/user-data/outputs/link.txt":               404,
		"/mnt/user-data/uploads/link.txt":               404,
		"/mnt/user-data/workspace/draft.txt":            404,
		"/mnt/user-data/outputs/..%2F..%2F..%2Fsecret":  400,
		"/mnt/user-data/outputs/%2E%2E/workspace/draft": 0, // cleaned by the mux: never served
		"//etc/passwd": 404,
		"/etc/passwd":  404,
		"/mnt/user-data/uploads/..%2Foutputs/report.txt": 400,
		"/mnt/user-data/outputs/nope.txt":                404,
		"/mnt/user-data/outputs":                         404,
	} {
		code, _, body := h.do("GET", base+path, "", nil)
		if bytes.Contains(body, []byte("TOP SECRET")) || bytes.Contains(body, []byte("draft")) && code == 200 {
			t.Errorf("%s served: %d %s", path, code, body)
		}
		if want != 0 && code != want {
			t.Errorf("%s: %d %s, want %d", path, code, body, want)
		}
	}
}

// userData is the thread's user-data directory on the host.
func userData(t *testing.T, h *harness) string {
	t.Helper()
	f, err := h.sb.Reopen(thread, "/mnt/user-data/outputs/report.txt")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	return filepath.Dir(filepath.Dir(rc.(*os.File).Name()))
}
