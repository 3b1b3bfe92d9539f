package imagegen

import (
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/tools"
)

func TestGenerateSavesPNG(t *testing.T) {
	img := testPNG(t, 64, 48)
	r := newRig(t, config.ImageGeneration{Model: "dall-e-3", APIKey: "sk-test-SECRET", Size: "1792x1024"},
		answerImage(img, "A red fox, in watercolour, reading a newspaper."))
	out, err := r.call(t, map[string]any{"prompt": "A red fox reading a newspaper on a park bench. Style: watercolour.",
		"size": "1024x1024", "filename": "fox.png", "description": "A fox reading the news"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := r.fake.requests()
	want := []imageRequest{{Auth: "Bearer sk-test-SECRET", Body: map[string]any{
		"model": "dall-e-3", "prompt": "A red fox reading a newspaper on a park bench. Style: watercolour.",
		"n": 1.0, "size": "1024x1024", "response_format": "b64_json"}}}
	if d := cmp.Diff(want, reqs); d != "" {
		t.Errorf("the service received (-want +got):\n%s", d)
	}
	for _, s := range []string{"/mnt/user-data/outputs/fox.png", "64x48 PNG", `present_files ["/mnt/user-data/outputs/fox.png"]`,
		"rewrote the prompt as: A red fox, in watercolour", "Caption: A fox reading the news"} {
		if !strings.Contains(out, s) {
			t.Errorf("result lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "SECRET") || strings.Contains(out, r.dataDir) {
		t.Errorf("result leaks the key or a host path:\n%s", out)
	}
	f, err := os.Open(r.output("fox.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the saved file is not a PNG: %v", err)
	}
	if b := got.Bounds(); b.Dx() != 64 || b.Dy() != 48 {
		t.Errorf("saved image is %v", b)
	}
}

// GPT Image models always answer b64_json and refuse response_format;
// the configured size applies when a call names none; without a file
// name, the prompt names the file.
func TestGenerateGPTImageDefaults(t *testing.T) {
	r := newRig(t, config.ImageGeneration{Model: "gpt-image-1", Size: "1536x1024"}, answerImage(testPNG(t, 8, 8), ""))
	out, err := r.call(t, map[string]any{"prompt": "A lighthouse at dusk, oil painting, 16:9"})
	if err != nil {
		t.Fatal(err)
	}
	body := r.fake.requests()[0].Body
	if _, ok := body["response_format"]; ok || body["size"] != "1536x1024" || body["model"] != "gpt-image-1" {
		t.Errorf("the service received %v", body)
	}
	if !strings.Contains(out, "/mnt/user-data/outputs/a-lighthouse-at-dusk-oil-painting.png") || strings.Contains(out, "rewrote") {
		t.Errorf("result:\n%s", out)
	}
	if names := r.outputs(t); !cmp.Equal(names, []string{"a-lighthouse-at-dusk-oil-painting.png"}) {
		t.Errorf("outputs hold %v", names)
	}
}

type answer = func(http.ResponseWriter, *http.Request)

// failure is a way the service fails, what the model is told, and how
// many requests it took.
type failure struct {
	name     string
	answers  []answer
	want     string // in the error; "" = success
	requests int
	slept    []time.Duration
}

func failures(t *testing.T) []failure {
	img := testPNG(t, 4, 4)
	busy := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "2")
		answerError(429, "requests", "rate_limit_exceeded", "Rate limit reached for images per minute.")(w, nil)
	}
	return []failure{
		{"content policy", []answer{answerError(400, "invalid_request_error", "content_policy_violation",
			"Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.")},
			"The image service refused this prompt under its content policy (Your request was rejected as a result of our safety system.", 1, nil},
		{"moderation blocked", []answer{answerError(400, "image_generation_user_error", "moderation_blocked", "Your request was rejected by the safety system.")},
			"under its content policy (Your request was rejected by the safety system)", 1, nil},
		{"invalid size", []answer{answerError(400, "invalid_request_error", "invalid_value", "Invalid size '1024x1025'.")},
			"The image service refused the request (Invalid size '1024x1025'); check the size", 1, nil},
		{"429 then 200", []answer{busy, answerImage(img, "")}, "", 2, []time.Duration{2 * time.Second}},
		{"429 twice", []answer{busy}, "The image service is rate-limiting requests", 2, []time.Duration{2 * time.Second}},
		{"500 twice", []answer{answerError(500, "server_error", "", "The server had an error processing your request.")},
			"The image service is having trouble right now", 2, nil},
		{"key refused", []answer{answerError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-test-SECRET.")},
			"The image service refused the API key configured for it (image_generation.api_key)", 1, nil},
		{"unknown model", []answer{answerError(404, "invalid_request_error", "model_not_found", "The model `dall-e-9` does not exist.")},
			`does not know the model "dall-e-3" (image_generation.model)`, 1, nil},
		{"not an image", []answer{answerImage([]byte("<html>Service Unavailable</html>"), "")},
			"The image service sent data that is not an image, so nothing was saved.", 1, nil},
		{"bad base64", []answer{answerJSON(200, map[string]any{"created": 1, "data": []map[string]string{{"b64_json": "%%%"}}})},
			"not an image", 1, nil},
		{"no data", []answer{answerJSON(200, map[string]any{"created": 1, "data": []any{}})}, "answered without an image", 1, nil},
		{"not JSON", []answer{func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>ok</html>")) }},
			"could not be read", 1, nil},
		{"oversized", []answer{answerImage(make([]byte, 64<<10), "")}, "larger than 20 MB, so it was not saved", 1, nil},
	}
}

func TestGenerateFailures(t *testing.T) {
	for _, tc := range failures(t) {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, config.ImageGeneration{Model: "dall-e-3", APIKey: "sk-test-SECRET"}, tc.answers...)
			r.gen.max = 32 << 10
			out, err := r.call(t, map[string]any{"prompt": "a cat", "filename": "cat"})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("failed: %v", err)
			case tc.want == "":
				if !strings.Contains(out, "/mnt/user-data/outputs/cat.png") {
					t.Errorf("result: %s", out)
				}
			case err == nil:
				t.Fatalf("succeeded, want an error with %q: %s", tc.want, out)
			case !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SECRET") || strings.Count(err.Error(), ". ") > 1:
				t.Errorf("error %q, want one sentence with %q and no key", err, tc.want)
			}
			if n := len(r.fake.requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if tc.slept != nil && !cmp.Equal(r.slept, tc.slept) {
				t.Errorf("waited %v before retrying, want %v", r.slept, tc.slept)
			}
			if tc.want != "" && len(r.outputs(t)) != 0 {
				t.Errorf("a failure left files: %v", r.outputs(t))
			}
		})
	}
}

func TestGenerateTimeout(t *testing.T) {
	r := newRig(t, config.ImageGeneration{Model: "dall-e-3", TimeoutSeconds: 1}, func(w http.ResponseWriter, req *http.Request) {
		<-req.Context().Done() // never answers
	})
	r.gen.timeout = 50 * time.Millisecond
	_, err := r.call(t, map[string]any{"prompt": "a slow cat"})
	if err == nil || !strings.Contains(err.Error(), "did not return an image within 50ms") {
		t.Fatalf("error %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the detail behind %q is lost", err)
	}
}

// The caller's own cancellation (/stop) stays a cancellation.
func TestGenerateCancelled(t *testing.T) {
	started := make(chan struct{})
	r := newRig(t, config.ImageGeneration{Model: "dall-e-3"}, func(w http.ResponseWriter, req *http.Request) {
		close(started)
		<-req.Context().Done()
	})
	ctx, cancel := context.WithCancel(tools.WithEnv(context.Background(), &tools.Env{ThreadID: threadID}))
	go func() { <-started; cancel() }()
	_, err := r.tool.Run(ctx, json.RawMessage(`{"prompt": "a cat"}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestGenerateRefusesBadCalls(t *testing.T) {
	r := newRig(t, config.ImageGeneration{Model: "dall-e-3"}, answerImage(testPNG(t, 4, 4), ""))
	for args, want := range map[string]string{
		`{"prompt": "  "}`:                    "prompt must not be empty",
		`{"prompt": "a cat", "size": "huge"}`: `size "huge" must be WIDTHxHEIGHT`,
		`{}`:                                  "missing required argument(s): prompt",
	} {
		_, err := r.tool.Run(tools.WithEnv(context.Background(), &tools.Env{ThreadID: threadID}), json.RawMessage(args))
		if !tools.IsArgError(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want an ArgError with %q", args, err, want)
		}
	}
	if _, err := r.tool.Run(context.Background(), json.RawMessage(`{"prompt": "a cat"}`)); err == nil || !strings.Contains(err.Error(), "needs a conversation") {
		t.Errorf("without a thread: %v", err)
	}
	if n := len(r.fake.requests()); n != 0 {
		t.Errorf("bad calls reached the service %d times", n)
	}
}

func TestFromConfig(t *testing.T) {
	if FromConfig(&config.Config{}, nil) != nil {
		t.Error("a tool without image_generation.model")
	}
	tl := FromConfig(&config.Config{ImageGeneration: config.ImageGeneration{Model: "gpt-image-1"}}, fakeOutputs{})
	if tl == nil || tl.Spec().Name != "generate_image" {
		t.Fatalf("tool %v", tl)
	}
	if st, ok := tl.(tools.SelfTimed); !ok || !st.SelfTimed() {
		t.Error("generate_image keeps its own time, but the agent's per-call timeout would cut it")
	}
	var schema struct {
		Required   []string
		Properties map[string]any
	}
	json.Unmarshal(tl.Spec().Parameters, &schema)
	if !cmp.Equal(schema.Required, []string{"prompt"}) || len(schema.Properties) != 4 {
		t.Errorf("schema %s", tl.Spec().Parameters)
	}
	// api.openai.com without a key fails before any request.
	g := tl.(*tool).g
	if _, _, err := g.generate(context.Background(), "a cat", ""); !strings.Contains(g.words(err), "No API key is configured for the image service") {
		t.Errorf("no key: %v", err)
	}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct{ asked, prompt, format, want string }{
		{"fox", "", "png", "fox.png"},
		{"fox.png", "", "png", "fox.png"},
		{"/mnt/user-data/outputs/Fox Poster.PNG", "", "png", "fox-poster.png"},
		{"../../etc/passwd", "", "png", "passwd.png"},
		{"..", "a cat", "png", "a-cat.png"},
		{".hidden", "", "png", "hidden.png"},
		{"", "A red fox, reading: the news!", "jpeg", "a-red-fox-reading-the-news.jpg"},
		{"", "Ein Fuchs im Schnee", "png", "ein-fuchs-im-schnee.png"},
		{"", "日本の 庭園", "png", "日本の-庭園.png"},
		{"", "!!!", "png", "image.png"},
		{strings.Repeat("x", 200), "", "png", strings.Repeat("x", 80) + ".png"},
	} {
		if got := fileName(tc.asked, tc.prompt, tc.format); got != tc.want {
			t.Errorf("fileName(%q, %q) = %q, want %q", tc.asked, tc.prompt, got, tc.want)
		}
	}
}

// An answer longer than the cap fails as too large as soon as the cap is
// passed, without reading the rest.
func TestCappedBody(t *testing.T) {
	body := strings.NewReader(strings.Repeat("x", 100))
	lb := &limitBody{ReadCloser: io.NopCloser(body), left: 10}
	data, err := io.ReadAll(lb)
	if !errors.Is(err, errTooLarge) || len(data) != 10 || body.Len() != 89 {
		t.Errorf("read %d bytes, error %v, %d left unread", len(data), err, body.Len())
	}
	exact := &limitBody{ReadCloser: io.NopCloser(strings.NewReader("0123456789")), left: 10}
	if data, err := io.ReadAll(exact); err != nil || string(data) != "0123456789" {
		t.Errorf("a body of exactly the cap: %q, %v", data, err)
	}
	// Through go-openai: a 2 MB answer with a 1 KB image cap.
	r := newRig(t, config.ImageGeneration{Model: "dall-e-3"}, answerImage(make([]byte, 2<<20), ""))
	r.gen.max = 1 << 10
	if _, err := r.call(t, map[string]any{"prompt": "a cat"}); err == nil || !errors.Is(err, errTooLarge) {
		t.Errorf("error %v, want errTooLarge", err)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		ig   config.ImageGeneration
		want string
	}{
		{config.ImageGeneration{}, "images\toff: generate_image is not offered"},
		{config.ImageGeneration{Model: "gpt-image-1"}, "images\tgenerate_image by gpt-image-1 at https://api.openai.com/v1, NO API key"},
		{config.ImageGeneration{Model: "dall-e-3", APIKey: "sk-SECRET", BaseURL: "https://u:SECRET@img.example/v1"},
			"images\tgenerate_image by dall-e-3 at https://u:***@img.example/v1, with an API key"},
	} {
		got := Describe(&config.Config{ImageGeneration: tc.ig})
		if !strings.HasPrefix(got, tc.want) || strings.Contains(got, "SECRET") {
			t.Errorf("Describe(%+v) = %q, want %q", tc.ig, got, tc.want)
		}
	}
}
