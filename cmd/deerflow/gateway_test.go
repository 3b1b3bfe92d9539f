package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// TestGatewayServe: DeerFlow's UI routes through the built app, behind
// the API token: refused without it; with it, the models, an upload of a
// CSV converted to Markdown, and that Markdown served as an artifact.
func TestGatewayServe(t *testing.T) {
	model := fakeopenai.New(t)
	addr := freeAddr(t)
	cfg := testConfig(t, model, t.TempDir())
	cfg.HTTP = config.HTTP{Listen: addr, APIToken: apiToken}
	cfg.Shutdown.GraceSeconds = 0
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, io.Discard, nil) }()
	defer func() { cancel(); <-served }()
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	base := "http://" + addr

	gw := func(method, path, ctype string, body io.Reader, token bool) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, body)
		if token {
			req.Header.Set("Authorization", "Bearer "+apiToken)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, data
	}
	if code, _ := gw("GET", "/api/models", "", nil, false); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	code, data := gw("GET", "/api/models", "", nil, true)
	var models struct {
		Models []struct{ Name, Model string }
	}
	if json.Unmarshal(data, &models); code != 200 || len(models.Models) == 0 || models.Models[0].Name != cfg.Models[0].Name {
		t.Errorf("models: %d %s", code, data)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("files", "prices.csv")
	fw.Write([]byte("item,price\nmilk,1.20\n"))
	mw.Close()
	thread := "0b6f1a2c-3d4e-4f50-8a9b-c0d1e2f3a4b5"
	code, data = gw("POST", "/api/threads/"+thread+"/uploads", mw.FormDataContentType(), &buf, true)
	var up struct {
		Files []struct {
			VirtualPath         string `json:"virtual_path"`
			MarkdownArtifactURL string `json:"markdown_artifact_url"`
		}
	}
	if json.Unmarshal(data, &up); code != 200 || len(up.Files) != 1 || up.Files[0].MarkdownArtifactURL == "" {
		t.Fatalf("upload: %d %s", code, data)
	}
	if code, data = gw("GET", up.Files[0].MarkdownArtifactURL, "", nil, true); code != 200 || !strings.Contains(string(data), "| milk | 1.20 |") {
		t.Errorf("the Markdown artifact: %d %s", code, data)
	}
	// An upload may be larger than other API bodies (1 MiB): up to
	// sandbox.max_upload_mb per file; a file over that is refused.
	upload := func(size int) int {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("files", "big.bin")
		fw.Write(bytes.Repeat([]byte("x"), size))
		mw.Close()
		code, _ := gw("POST", "/api/threads/"+thread+"/uploads", mw.FormDataContentType(), &buf, true)
		return code
	}
	if code := upload(3 << 20); code != 200 {
		t.Errorf("a 3 MB upload: %d", code)
	}
	if code := upload(int(cfg.Sandbox.MaxUploadMB)<<20 + 1); code == 200 {
		t.Errorf("an upload over sandbox.max_upload_mb was taken")
	}
	var agents struct{ Agents []any }
	if code, data = gw("GET", "/api/agents", "", nil, true); code != 200 || json.Unmarshal(data, &agents) != nil {
		t.Errorf("agents: %d %s", code, data)
	}
	if code, data = gw("GET", "/api/v1/auth/me", "", nil, true); code != 200 || !strings.Contains(string(data), `"system_role":"admin"`) {
		t.Errorf("me: %d %s", code, data)
	}
}
