package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// startupConfig writes a config file in a fresh directory: data and
// skills in it, then body.
func startupConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	head := "data_dir: " + filepath.Join(dir, "data") + "\nskills: {path: " + filepath.Join(dir, "skills") + "}\n"
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte(head+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runCLI runs a command line in this process.
func runCLI(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(ctx, args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// wantAll reports each of want that text lacks.
func wantAll(t *testing.T, what, text string, want []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// check names every problem of a broken config in one run and exits 1;
// warnings alone (a channel open to everyone, an MCP server down) are
// printed apart and exit 0.
func TestCheckBrokenConfigs(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	local := "models:\n  - {name: m, model: x, base_url: \"http://127.0.0.1:1/v1\"}\n"
	for _, tt := range []struct {
		name, yml      string
		code           int
		stdout, stderr []string
	}{
		{"missing key", "models:\n  - {name: m, model: gpt-4o-mini, api_key: $OPENAI_API_KEY}\n", 1, nil,
			[]string{"models[0].api_key: $OPENAI_API_KEY is not set (api.openai.com needs a key"}},
		{"missing key, no file models", "", 1, nil, []string{"models[0].api_key: $OPENAI_API_KEY is not set"}},
		{"unset variable named", local + "channels:\n  telegram: {enabled: true, bot_token: $DEERFLOW_TEST_NO_SUCH_VAR, allowed_users: [1]}\n", 1, nil,
			[]string{"channels.telegram.bot_token: $DEERFLOW_TEST_NO_SUCH_VAR is not set (required when channels.telegram.enabled is true)"}},
		{"type, key and value errors in one run", local + "agent: {max_turns: lots, max_turnz: 1}\nmemory: {scope: team}\nchannels:\n  telegram: {enabled: true, bot_token: \"1:x\"}\n", 1, nil,
			[]string{"agent.max_turns: expected an integer", `unknown key "agent.max_turnz"`, `memory.scope: must be "user" or "chat"`,
				"warning: ", "channel telegram is open to everyone"}},
		{"short api_token", local + "http: {listen: \"127.0.0.1:0\", api_token: x}\n", 1, nil,
			[]string{"http.api_token: must be at least 32 characters long (it has 1)"}},
		{"channel open to everyone", local + "channels:\n  telegram: {enabled: true, bot_token: \"1:x\"}\n", 0,
			[]string{"\nwarning: ", "channels.telegram.allowed_users: channel telegram is open to everyone", "no errors, 1 warning(s)"}, nil},
		{"mcp server down", local + "mcp:\n  servers: [{name: gone, url: \"" + closedURL(t) + "\"}]\n", 0,
			[]string{"warning: mcp server gone: unavailable", "no errors, 1 warning(s)"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(context.Background(), "check", "--config", startupConfig(t, tt.yml))
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			wantAll(t, "stdout", out, tt.stdout)
			wantAll(t, "stderr", errOut, tt.stderr)
		})
	}
}

// check lists view_image only with the models that see images.
func TestCheckViewImageOnlyForVision(t *testing.T) {
	blind := "models:\n  - {name: m, model: x, base_url: \"http://127.0.0.1:1/v1\"}\n"
	out, errOut, code := runCLI(context.Background(), "check", "--config", startupConfig(t, blind))
	if code != 0 || strings.Contains(out, "view_image") {
		t.Errorf("exit %d; a model without vision is shown view_image:\n%s%s", code, out, errOut)
	}
	eyes := blind + "  - {name: eyes, model: y, base_url: \"http://127.0.0.1:1/v1\", supports_vision: true}\n"
	out, errOut, code = runCLI(context.Background(), "check", "--config", startupConfig(t, eyes))
	if code != 0 || !strings.Contains(out, "view_image (vision models only: eyes)") {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
}

// serve asks the models first and refuses to start when one cannot
// answer, saying which and how to fix it; Telegram is never contacted.
func TestServeModelCheck(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	fake := fakeopenai.New(t)
	fake.Models = []string{"fake-model", "fake-model-2"}
	keyed := fakeopenai.New(t)
	keyed.Key = "sk-right"
	root := strings.TrimSuffix(fake.URL, "/v1")
	gone := closedURL(t)
	tg := newTelegram(t)
	channel := "channels:\n  telegram: {enabled: true, bot_token: \"" + tg.Token + "\", api_url: " + tg.URL + ", allowed_users: [1]}\n"
	for _, tt := range []struct{ name, model, want string }{
		{"base URL without /v1", "{name: m, model: fake-model, base_url: \"" + root + "\"}",
			"models[0] (m): the base URL " + root + " answers 404; does it need /v1? Set models[0].base_url to " + root + "/v1."},
		{"unknown model", "{name: m, model: fake-modle, base_url: \"" + fake.URL + "\"}",
			`models[0] (m): the provider does not know the model "fake-modle": check models[0].model; of the 2 it lists, the closest: fake-model`},
		{"unreachable", "{name: m, model: x, base_url: \"" + gone + "\"}",
			"models[0] (m): cannot reach " + strings.TrimSuffix(gone, "/") + " ("},
		{"key refused", "{name: m, model: fake-model, base_url: \"" + keyed.URL + "\", api_key: sk-WRONG}",
			"models[0] (m): " + keyed.URL + " refuses the api key (HTTP 401): check models[0].api_key."},
		{"missing key", "{name: m, model: gpt-4o-mini}",
			"models[0].api_key: api.openai.com needs a key: set models[0].api_key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startupConfig(t, "models:\n  - "+tt.model+"\n"+channel)
			_, errOut, code := runCLI(context.Background(), "serve", "--config", p)
			if code != 1 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr lacks %q:\n%s", code, tt.want, errOut)
			}
			if strings.Contains(errOut, "WRONG") {
				t.Errorf("the key was printed:\n%s", errOut)
			}
		})
	}
	if calls := tg.Calls(); len(calls) != 0 {
		t.Errorf("serve contacted Telegram before refusing: %v", calls)
	}
}

// serve --no-model-check starts with a model it cannot reach, and logs
// one loud warning for a channel open to everyone.
func TestServeNoModelCheck(t *testing.T) {
	tg := newTelegram(t)
	p := startupConfig(t, "models:\n  - {name: m, model: x, base_url: \""+closedURL(t)+"\"}\n"+
		"channels:\n  telegram: {enabled: true, bot_token: \""+tg.Token+"\", api_url: "+tg.URL+"}\n")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr faultLog
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--config", p, "--no-model-check"}, nil, &bytes.Buffer{}, &stderr)
	}()
	tg.WaitCalls("setMyCommands", 1) // the channel started
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "channel telegram is open to everyone"); n != 1 || !stderr.warned("WARNING") {
		t.Errorf("%d warnings of an open channel:\n%s", n, stderr.String())
	}
}

// A service configured by the environment alone: the Telegram token
// switches the channel on, its allow-list keeps strangers out, and the
// HTTP API listens with its token. (The file holds only the fake's
// address and the skills directory.)
func TestServeEnvOnly(t *testing.T) {
	model, tg := fakeopenai.New(t), newTelegram(t)
	model.Handle(func(fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "Hi Ann."} })
	addr := freeAddr(t)
	for k, v := range map[string]string{
		"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": model.URL, "OPENAI_MODEL": "fake-model",
		"TELEGRAM_BOT_TOKEN": tg.Token, "DEERFLOW_TELEGRAM_ALLOWED_USERS": "@ann",
		"DEERFLOW_API_TOKEN": apiToken, "DEERFLOW_HTTP_LISTEN": addr, "DEERFLOW_DATA_DIR": t.TempDir(),
	} {
		t.Setenv(k, v)
	}
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte("channels: {telegram: {api_url: "+tg.URL+"}}\nskills: {path: "+t.TempDir()+"}\nmemory: {enabled: false}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr faultLog
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--config", p}, nil, &bytes.Buffer{}, &stderr) }()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d:\n%s", code, stderr.String())
		}
	}()
	tg.PushMessage(faketelegram.Private(bob, "let me in"))
	tg.PushMessage(faketelegram.Private(ann, "hello"))
	waitMessage(t, tg, ann.ID, "Hi Ann.")
	if got := tg.Messages(bob.ID); len(got) != 0 {
		t.Errorf("a user not on DEERFLOW_TELEGRAM_ALLOWED_USERS got %d message(s)", len(got))
	}
	for token, want := range map[string]int{apiToken: http.StatusOK, "": http.StatusUnauthorized} {
		req, _ := http.NewRequest("POST", "http://"+addr+"/api/threads", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("POST /api/threads with token %v: %d, want %d", token != "", resp.StatusCode, want)
		}
	}
	if strings.Contains(stderr.String(), "open to everyone") {
		t.Errorf("warned of an open channel:\n%s", stderr.String())
	}
}
