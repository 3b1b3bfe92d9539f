package imagegen

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/tools"
)

// fakeImages is OpenAI's images endpoint as documented: POST
// /v1/images/generations with {model, prompt, n, size, response_format},
// answering {created, data: [{b64_json, revised_prompt}]}, or an error
// object. Each request takes the next of answers; the last one repeats.
type fakeImages struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, r *http.Request)
	got     []imageRequest
}

// imageRequest is what the fake received.
type imageRequest struct {
	Auth string
	Body map[string]any
}

func (f *fakeImages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/images/generations" {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error": {"message": "bad json", "type": "invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.got = append(f.got, imageRequest{Auth: r.Header.Get("Authorization"), Body: body})
	answer := f.answers[min(len(f.got), len(f.answers))-1]
	f.mu.Unlock()
	answer(w, r)
}

func (f *fakeImages) requests() []imageRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]imageRequest(nil), f.got...)
}

// answerImage answers with data as b64_json.
func answerImage(data []byte, revised string) func(http.ResponseWriter, *http.Request) {
	return answerJSON(200, map[string]any{"created": 1713833628, "data": []map[string]string{
		{"b64_json": base64.StdEncoding.EncodeToString(data), "revised_prompt": revised}}})
}

func answerJSON(status int, v any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
}

// answerError answers with OpenAI's error object.
func answerError(status int, typ, code, msg string) func(http.ResponseWriter, *http.Request) {
	return answerJSON(status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

// testPNG is a real PNG of w×h pixels, encoded by image/png.
func testPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: 200, G: 80, B: 20, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rig is the tool wired as cmd/deerflow wires it (FromConfig over a real
// sandbox.Manager), against a fake service.
type rig struct {
	fake    *fakeImages
	srv     *httptest.Server
	dataDir string
	tool    tools.Tool
	gen     *generator
	slept   []time.Duration
}

const threadID = "thread-1"

func newRig(t *testing.T, ig config.ImageGeneration, answers ...func(http.ResponseWriter, *http.Request)) *rig {
	t.Helper()
	r := &rig{fake: &fakeImages{answers: answers}, dataDir: t.TempDir()}
	r.srv = httptest.NewServer(r.fake)
	t.Cleanup(r.srv.Close)
	sb, err := sandbox.New(sandbox.Options{DataDir: r.dataDir, DeferProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	if ig.BaseURL == "" {
		ig.BaseURL = r.srv.URL + "/v1"
	}
	cfg := &config.Config{ImageGeneration: ig}
	r.tool = FromConfig(cfg, sb)
	if r.tool == nil {
		t.Fatal("FromConfig offered no tool for a configured model")
	}
	r.gen = r.tool.(*tool).g
	var mu sync.Mutex
	r.gen.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		r.slept = append(r.slept, d)
		mu.Unlock()
		return ctx.Err()
	}
	return r
}

// call runs generate_image in the conversation threadID.
func (r *rig) call(t *testing.T, args map[string]any) (string, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx := tools.WithEnv(context.Background(), &tools.Env{ThreadID: threadID})
	return r.tool.Run(ctx, raw)
}

// output is the host file behind /mnt/user-data/outputs/name.
func (r *rig) output(name string) string {
	return filepath.Join(r.dataDir, "threads", threadID, "user-data", "outputs", name)
}

// outputs lists the files in the conversation's outputs.
func (r *rig) outputs(t *testing.T) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Dir(r.output("x")))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// cmd/deerflow passes its *sandbox.Manager as Outputs.
var _ Outputs = (*sandbox.Manager)(nil)
