package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/api"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/sandbox"
)

// sandboxHarness is the harness with the real sandbox's tools, serving
// files as the binary does (Reopen of the outputs).
func sandboxHarness(t *testing.T) (*harness, *sandbox.Manager, string) {
	t.Helper()
	dataDir := t.TempDir()
	sb, err := sandbox.New(sandbox.Options{DataDir: dataDir, DeferProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, config{
		tools: sb.Tools(),
		api: func(o *api.Options) {
			o.Files = func(threadID, name string) (event.File, error) {
				return sb.Reopen(threadID, sandbox.Outputs+"/"+name)
			}
		},
	})
	return h, sb, dataDir
}

func outputsDir(dataDir, thread string) string {
	return filepath.Join(dataDir, "threads", thread, "user-data", "outputs")
}

func TestAPIFilesRoute(t *testing.T) {
	h, sb, dataDir := sandboxHarness(t)
	id, other := h.createThread(), h.createThread()
	data := []byte("# Report\n\nbinary-safe: \x00\x01\xff\n")
	if _, err := sb.SaveOutput(id, "report.md", data); err != nil {
		t.Fatal(err)
	}
	r := h.request("GET", "/api/threads/"+id+"/files/report.md", nil)
	if r.status != http.StatusOK || string(r.body) != string(data) {
		t.Fatalf("download: %d %q", r.status, r.body)
	}
	if cl := r.header.Get("Content-Length"); cl != strconv.Itoa(len(data)) {
		t.Errorf("Content-Length = %q", cl)
	}
	if cd := r.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, "report.md") {
		t.Errorf("Content-Disposition = %q", cd)
	}
	if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Content-Type") == "" {
		t.Errorf("headers = %v", r.header)
	}
	// A name that needs escaping.
	odd := "100% done #1?.txt"
	if _, err := sb.SaveOutput(id, odd, []byte("odd")); err != nil {
		t.Fatal(err)
	}
	if r := h.request("GET", "/api/threads/"+id+"/files/"+url.PathEscape(odd), nil); r.status != http.StatusOK || string(r.body) != "odd" {
		t.Errorf("download %q: %s", odd, r)
	}

	// Outside content: a secret next to the data dir, and links to it.
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := outputsDir(dataDir, id)
	rel, err := filepath.Rel(out, secret)
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"leak.txt":   secret,
		"passwd":     "/etc/passwd",
		"rel.txt":    rel,
		"inside.txt": filepath.Join(out, "report.md"), // a link, even to a file inside
	} {
		if err := os.Symlink(target, filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(out, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "sub", "deep.txt"), []byte("DEEP-CONTENT"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The workspace is the thread's too, but not its outputs.
	if err := os.WriteFile(filepath.Join(filepath.Dir(out), "workspace", "draft.txt"), []byte("DRAFT-CONTENT"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name   string // as written in the URL
		status int
	}{
		{"..", 0},
		{"%2e%2e", 0},
		{".", 0},
		{"%2e", 0},
		{"a%2fb", 400},
		{"sub%2fdeep.txt", 400},
		{"..%2f..%2f..%2fsecret.txt", 400},
		{"..%2fworkspace%2fdraft.txt", 400},
		{"%2e%2e%2fworkspace%2fdraft.txt", 400},
		{"a%5cb", 400},
		{"..%5c..%5csecret.txt", 400},
		{"x%00", 400},
		{"report.md%00.txt", 400},
		{"leak.txt", 404},
		{"passwd", 404},
		{"rel.txt", 404},
		{"inside.txt", 404},
		{"sub", 404},
		{"deep.txt", 404},
		{"draft.txt", 404},
		{"missing.txt", 404},
		{"%2fetc%2fpasswd", 400},
	} {
		r := h.request("GET", "/api/threads/"+id+"/files/"+c.name, nil)
		for _, bad := range []string{"TOP-SECRET", "root:", "DEEP-CONTENT", "DRAFT-CONTENT"} {
			if strings.Contains(string(r.body), bad) {
				t.Errorf("%s: served outside content: %s", c.name, r)
			}
		}
		switch {
		case c.status == 0:
			// The mux cleans the path (a redirect up to the thread): no
			// file is served, whatever the status.
			if r.status == http.StatusOK {
				t.Errorf("%s: %s", c.name, r)
			}
			if r.status == http.StatusMovedPermanently && strings.Contains(r.header.Get("Location"), "/files/") {
				t.Errorf("%s: redirected to %s", c.name, r.header.Get("Location"))
			}
		case c.status == 400:
			wantError(t, r, 400, "bad_name")
		default:
			wantError(t, r, c.status, "file_not_found")
		}
	}
	// One thread's outputs are not another's.
	wantError(t, h.request("GET", "/api/threads/"+other+"/files/report.md", nil), http.StatusNotFound, "file_not_found")
	if _, err := os.Stat(secret); err != nil {
		t.Fatal(err)
	}
}

func TestAPIFilesWithoutFilesOption(t *testing.T) {
	h := newHarness(t, config{})
	id := h.createThread()
	wantError(t, h.request("GET", "/api/threads/"+id+"/files/report.md", nil), http.StatusNotFound, "file_not_found")
}

// TestAPIFilesEvent: a run whose tools write and present files shows a
// files event whose urls download them.
func TestAPIFilesEvent(t *testing.T) {
	h, _, dataDir := sandboxHarness(t)
	write := func(path, content string) fakeopenai.Turn {
		args, _ := json.Marshal(map[string]string{"description": "write", "path": path, "content": content})
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: string(args)}}}
	}
	odd := "my report #1 (100%).md"
	present, _ := json.Marshal(map[string][]string{"filepaths": {
		"/mnt/user-data/outputs/report.md",
		"/mnt/user-data/outputs/" + odd,
		"/mnt/user-data/outputs/sub/deep.txt",
	}})
	h.fake.Script(
		write("/mnt/user-data/outputs/report.md", "# The report\n"),
		write("/mnt/user-data/outputs/"+odd, "odd one"),
		write("/mnt/user-data/outputs/sub/deep.txt", "nested"),
		// A file of the same base name at the top: the nested one's url
		// must not serve it.
		write("/mnt/user-data/outputs/deep.txt", "the other deep"),
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "present_files", Arguments: string(present)}}},
		fakeopenai.Turn{Text: "Here are your files."},
	)
	id := h.createThread()
	run := h.startRun(id, "write me files")
	evs := h.collect(id, run.RunID)
	if h.endStatus(evs) != "success" {
		t.Fatalf("events:\n%s", dump(evs))
	}
	fe := customs(t, evs, "files_presented")
	if len(fe) != 1 {
		t.Fatalf("files events:\n%s", dump(evs))
	}
	var files struct {
		Files []struct {
			Name string `json:"name"`
			Path string `json:"path"`
			Size int64  `json:"size"`
			URL  string `json:"url"`
		} `json:"files"`
	}
	fe[0].decode(t, &files)
	want := map[string]string{"report.md": "# The report\n", odd: "odd one", "deep.txt": "nested"}
	if th := h.getThread(id); len(th.Values.Artifacts) != 3 || th.Values.Artifacts[0] != "/mnt/user-data/outputs/report.md" {
		t.Errorf("artifacts = %q", th.Values.Artifacts)
	}
	if len(files.Files) != 3 {
		t.Fatalf("files = %+v", files)
	}
	for _, f := range files.Files {
		content, ok := want[f.Name]
		if !ok || f.Size != int64(len(content)) || !strings.HasPrefix(f.Path, "/mnt/user-data/outputs/") {
			t.Errorf("file %+v", f)
			continue
		}
		if strings.Contains(f.Path, dataDir) || strings.Contains(f.URL, dataDir) {
			t.Errorf("a host path shows: %+v", f)
		}
		if f.URL == "" {
			if f.Path != "/mnt/user-data/outputs/sub/deep.txt" {
				t.Errorf("no url for %+v", f)
			}
			continue
		}
		u, err := url.Parse(f.URL)
		if err != nil || u.Fragment != "" || u.RawQuery != "" {
			t.Errorf("url %q of %q does not name the file (%v)", f.URL, f.Name, err)
			continue
		}
		r := h.request("GET", f.URL, nil)
		if r.status != http.StatusOK || string(r.body) != content {
			t.Errorf("%s (%s): %s, want %q", f.URL, f.Path, r, content)
		}
	}
}
