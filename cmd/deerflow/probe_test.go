package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// capable answers like a model that streams, reasons, calls tools and
// sees images.
func capable(r fakeopenai.Request) fakeopenai.Turn {
	switch {
	case len(r.Tools) > 0:
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: r.Tools[0].Name, Arguments: "{}"}}}
	case bytes.Contains(r.Body, []byte(`"image_url"`)):
		return fakeopenai.Turn{Text: "Red."}
	}
	return fakeopenai.Turn{Reasoning: "They want one word.", Text: "ok"}
}

// blind answers text only: no tool calls, and a 400 for images, as
// models without vision do.
func blind(r fakeopenai.Request) fakeopenai.Turn {
	if bytes.Contains(r.Body, []byte(`"image_url"`)) {
		return fakeopenai.Turn{Status: 400, Body: `{"error":{"message":"Invalid content type. image_url is only supported by certain models.","type":"invalid_request_error","param":"messages.[0].content.[1].type","code":null}}`}
	}
	return fakeopenai.Turn{Text: "I would rather not."}
}

func probeConfig(t *testing.T, models ...config.Model) *config.Config {
	cfg := config.Default()
	cfg.DataDir, cfg.Skills.Path = t.TempDir(), t.TempDir()
	cfg.Models = models
	return cfg
}

// wantRow checks the table row of a model: its columns up to REASONING,
// then the time to the first token in any amount (never its value).
func wantRow(t *testing.T, out, name, cols, firstToken string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s+` + strings.Join(strings.Fields(cols), `\s+`) + `\s+` + firstToken + `$`)
	if !re.MatchString(out) {
		t.Errorf("no row %q %q %s in:\n%s", name, cols, firstToken, out)
	}
}

const anyTime = `\d+(?: ms|\.\d s)`

// check --probe-models through the command line: every model works, the
// table says so and the exit code is 0.
func TestProbeModelsAllWork(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Key = "sk-good"
	fake.Models = []string{"smart-1", "eyes-1"}
	fake.Handle(capable)
	dir := t.TempDir()
	yml := `data_dir: ` + filepath.Join(dir, "data") + `
skills: {path: ` + filepath.Join(dir, "skills") + `}
models:
  - {name: smart, model: smart-1, base_url: "` + fake.URL + `", api_key: sk-good, reasoning_effort: low, extra_body: {top_k: 20}}
  - {name: eyes, model: eyes-1, base_url: "` + fake.URL + `", api_key: sk-good, supports_vision: true}
`
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"check", "--config", file, "--probe-models"}, nil, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	if !strings.Contains(out, "MODEL  STREAMING  TOOLS  VISION  REASONING  FIRST TOKEN") {
		t.Errorf("no table header in:\n%s", out)
	}
	wantRow(t, out, "smart", "ok ok - yes", anyTime)
	wantRow(t, out, "eyes", "ok ok ok yes", anyTime)
	if !strings.Contains(out, "all 2 model(s) work\n") {
		t.Errorf("no verdict in:\n%s", out)
	}
	// A tiny request each: one answer, one tool offer, one image; the
	// model's switches go with each of its requests.
	reqs := fake.Requests()
	if len(reqs) != 5 {
		t.Errorf("%d requests, want 5", len(reqs))
	}
	for _, r := range reqs {
		sent := bytes.Contains(r.Body, []byte(`"reasoning_effort":"low"`)) && bytes.Contains(r.Body, []byte(`"top_k":20`))
		if sent != (r.Model == "smart-1") {
			t.Errorf("request to %s: reasoning_effort and extra_body sent: %v\n%s", r.Model, sent, r.Body)
		}
	}
}

// Each common mistake gets its row and one line saying how to fix it; the
// exit code is 1 and no key is printed.
func TestProbeModelsMistakes(t *testing.T) {
	good := fakeopenai.New(t)
	good.Models = []string{"gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "o3-mini", "text-embedding-3-small", "whisper-1", "gpt-4o-mini-tts"}
	good.Handle(capable)
	keyed := fakeopenai.New(t)
	keyed.Key = "sk-right"
	keyed.Handle(capable)
	text := fakeopenai.New(t)
	text.Handle(blind)
	root := strings.TrimSuffix(good.URL, "/v1")
	gone := closedURL(t)

	cfg := probeConfig(t,
		config.Model{Name: "fine", Model: "gpt-4o-mini", BaseURL: good.URL},
		config.Model{Name: "nov1", Model: "gpt-4o-mini", BaseURL: root},
		config.Model{Name: "typo", Model: "gpt4o-mini", BaseURL: good.URL},
		config.Model{Name: "badkey", Model: "m", BaseURL: keyed.URL, APIKey: "sk-WRONG-SECRET"},
		config.Model{Name: "chatty", Model: "m", BaseURL: text.URL, SupportsVision: true},
		config.Model{Name: "down", Model: "m", BaseURL: gone},
	)
	var stdout bytes.Buffer
	code := probeModels(context.Background(), cfg, &stdout)
	out := stdout.String()
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	wantRow(t, out, "fine", "ok ok - yes", anyTime)
	wantRow(t, out, "nov1", "FAIL - - -", "-")
	wantRow(t, out, "typo", "FAIL - - -", "-")
	wantRow(t, out, "badkey", "FAIL - - -", "-")
	wantRow(t, out, "chatty", "ok no FAIL no", anyTime)
	wantRow(t, out, "down", "FAIL - - -", "-")
	for _, want := range []string{
		"nov1: HTTP 404 from " + root + "/chat/completions: base_url probably needs /v1 at the end (" + root + "/v1)\n",
		`typo: the provider does not know the model "gpt4o-mini": check models[2].model; of the 7 it lists, the closest: gpt-4o-mini, gpt-4.1-mini, o3-mini, gpt-4o-mini-tts, gpt-4o` + "\n",
		"badkey: the api_key is refused (HTTP 401): check models[3].api_key, and that it belongs to " + keyed.URL + "\n",
		"chatty: tools: the model answered without calling the tool it was asked to call;",
		"chatty: vision: request refused (HTTP 400): ",
		"image_url is only supported by certain models; if the model takes no images, set models[4].supports_vision to false\n",
		"down: endpoint unreachable: ",
		"is the server up, and is models[5].base_url (" + gone + ") right?\n",
		"5 of 6 model(s) failed the probe\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SECRET") {
		t.Errorf("the key was printed:\n%s", out)
	}
	if strings.Contains(out, "fine:") {
		t.Errorf("a problem reported for the working model:\n%s", out)
	}
}

// A provider that answers an unknown model with a 400 (DeepSeek's "Model
// Not Exist") gets the same hint as a 404.
func TestProbeUnknownModel400(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Handle(func(fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Status: 400, Body: `{"error":{"message":"Model Not Exist","type":"invalid_request_error"}}`}
	})
	cfg := probeConfig(t, config.Model{Name: "ds", Model: "deepseek-chatt", BaseURL: fake.URL})
	var stdout bytes.Buffer
	if code := probeModels(context.Background(), cfg, &stdout); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := `ds: the provider does not know the model "deepseek-chatt": check models[0].model; of the 1 it lists, the closest: fake-model`
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, stdout.String())
	}
}

// closedURL is a base URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}
