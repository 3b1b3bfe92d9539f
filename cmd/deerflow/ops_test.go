package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

const opsKey = "sk-ops-e2e-secret-key"

// health is the part of /healthz the tests read.
type health struct {
	Status   string `json:"status"`
	Channels map[string]struct {
		Connected bool   `json:"connected"`
		Detail    string `json:"detail"`
	} `json:"channels"`
	Store  struct{ OK bool } `json:"store"`
	Models map[string]struct {
		Reachable bool   `json:"reachable"`
		Detail    string `json:"detail"`
	} `json:"models"`
}

// freeAddr is a loopback address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// fetch GETs url and returns the status and body (0 when nothing answers).
func fetch(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitHealth polls /healthz until ok holds for what it shows, and returns
// that. It fails the test if that never happens within a generous bound
// (a wait for a condition, not a timing assertion).
func waitHealth(t *testing.T, addr string, what string, ok func(code int, h health) bool) (int, health, string) {
	t.Helper()
	var code int
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		code, body = fetch("http://" + addr + "/healthz")
		var h health
		if code != 0 && json.Unmarshal([]byte(body), &h) == nil && ok(code, h) {
			return code, h, body
		}
	}
	t.Fatalf("/healthz never showed %s; last: %d\n%s", what, code, body)
	return 0, health{}, ""
}

// waitMetric polls /metrics until it has a line matching re, and returns
// the whole text.
func waitMetric(t *testing.T, addr string, re *regexp.Regexp) string {
	t.Helper()
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var code int
		if code, body = fetch("http://" + addr + "/metrics"); code == 200 && re.MatchString(body) {
			return body
		}
	}
	t.Fatalf("/metrics never matched %s:\n%s", re, body)
	return ""
}

// metricValue is the value of the sample named exactly series in text.
func metricValue(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

func TestBinaryOpsEndpoints(t *testing.T) {
	tg, sl, lk, model := newTelegram(t), fakeslack.New(t), fakelark.New(t), fakeopenai.New(t)
	model.Key = opsKey
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "ops: " + r.Last().Content} })
	addr := freeAddr(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
http:
  listen: %s
models:
  - {name: default, model: fake-model, base_url: %s, api_key: %s}
channels:
  telegram: {enabled: true, bot_token: %q, api_url: %s}
  slack: {enabled: true, bot_token: %s, app_token: %s, api_url: %s/api/}
  lark: {enabled: true, app_id: %s, app_secret: %s, domain: %s}
memory:
  enabled: false
`, addr, model.URL, opsKey, tg.Token, tg.URL, sl.BotToken, sl.AppToken, sl.URL, lk.AppID, lk.AppSecret, lk.URL))
	startBinaryServe(t, dir, cfg)

	// Everything up: 200, every channel connected, the store readable, the
	// model reachable (a probe: nothing has called it yet).
	_, h, body := waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	for _, name := range []string{"telegram", "slack", "lark"} {
		if !h.Channels[name].Connected {
			t.Errorf("%s is not connected:\n%s", name, body)
		}
	}
	if h.Status != "ok" || !h.Store.OK || !h.Models["default"].Reachable {
		t.Errorf("/healthz:\n%s", body)
	}
	if n := len(model.Requests()); n != 0 {
		t.Errorf("/healthz made %d chat completion requests (tokens spent)", n)
	}

	// A Telegram message answered shows in /metrics.
	tg.PushMessage(faketelegram.Private(ann, "count me"))
	waitMessage(t, tg, ann.ID, "ops: count me")
	waitMetric(t, addr, regexp.MustCompile(`(?m)^deerflow_runs_total\{agent="lead",outcome="answered"\} 1$`))
	// The registry gathers its collectors concurrently, so one scrape may
	// see the run counted before its duration: wait for both.
	text := waitMetric(t, addr, regexp.MustCompile(`(?m)^deerflow_run_duration_seconds_count\{agent="lead"\} 1$`))
	for series, want := range map[string]float64{
		`deerflow_inbound_messages_total{channel="telegram"}`:                             1,
		`deerflow_inbound_messages_total{channel="slack"}`:                                0,
		`deerflow_run_duration_seconds_count{agent="lead"}`:                               1,
		`deerflow_model_request_duration_seconds_count{model="default",result="ok"}`:      1,
		`deerflow_outbound_sends_total{channel="telegram",kind="message",result="error"}`: 0,
		`deerflow_outbound_sends_total{channel="lark",kind="file",result="ok"}`:           0,
		`deerflow_runs_total{agent="subagent",outcome="answered"}`:                        0,
		`deerflow_errors_total{kind="model"}`:                                             0,
		`deerflow_running_subagents`:                                                      0,
	} {
		if got, ok := metricValue(text, series); !ok || got != want {
			t.Errorf("%s = %v (present: %v), want %v", series, got, ok, want)
		}
	}
	for _, series := range []string{
		`deerflow_outbound_sends_total{channel="telegram",kind="message",result="ok"}`,
		`deerflow_model_tokens_total{model="default",type="prompt"}`,
	} {
		if got, _ := metricValue(text, series); got < 1 {
			t.Errorf("%s = %v, want at least 1", series, got)
		}
	}
	if _, ok := metricValue(text, `deerflow_rate_limit_waits_total{channel="telegram"}`); !ok {
		t.Error("/metrics lacks the telegram rate-limit waits")
	}
	for _, family := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if !strings.Contains(text, "\n"+family+" ") {
			t.Errorf("/metrics lacks %s", family)
		}
	}
	_, h, body = waitHealth(t, addr, "the model's real call", func(_ int, h health) bool {
		return strings.HasPrefix(h.Models["default"].Detail, "answered")
	})
	if !h.Models["default"].Reachable {
		t.Errorf("/healthz after a good call:\n%s", body)
	}

	// Slack's socket drops for good: /healthz turns 503 naming slack.
	sl.FailAlways("apps.connections.open", 500, 0, "")
	sl.DropSocket()
	code, h, body := waitHealth(t, addr, "slack disconnected", func(_ int, h health) bool { return !h.Channels["slack"].Connected })
	if code != http.StatusServiceUnavailable || h.Status != "degraded" {
		t.Errorf("/healthz with slack down = %d:\n%s", code, body)
	}
	if !h.Channels["telegram"].Connected || !h.Channels["lark"].Connected {
		t.Errorf("the other channels went down with slack:\n%s", body)
	}

	_, metricsText := fetch("http://" + addr + "/metrics")
	for _, secret := range []string{opsKey, tg.Token, sl.BotToken, sl.AppToken, lk.AppSecret} {
		if strings.Contains(body+metricsText, secret) {
			t.Errorf("a secret (%.6s…) appears in /healthz or /metrics", secret)
		}
	}
	if code, _ := fetch("http://" + addr + "/"); code != 404 {
		t.Errorf("/ = %d, want 404", code)
	}
}

// A model nobody can reach shows in /healthz, without a chat message.
func TestBinaryOpsModelUnreachable(t *testing.T) {
	tg := newTelegram(t)
	addr := freeAddr(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
http:
  listen: %s
models:
  - {name: default, model: m, base_url: http://%s/v1, api_key: %s}
channels:
  telegram: {enabled: true, bot_token: %q, api_url: %s}
memory:
  enabled: false
`, addr, freeAddr(t), opsKey, tg.Token, tg.URL))
	startBinaryServe(t, dir, cfg, "DEERFLOW_NO_MODEL_CHECK=true") // serve would refuse the model
	code, h, body := waitHealth(t, addr, "telegram connected", func(_ int, h health) bool { return h.Channels["telegram"].Connected })
	m := h.Models["default"]
	if code != http.StatusServiceUnavailable || h.Status != "degraded" || m.Reachable || !strings.Contains(m.Detail, "unreachable") {
		t.Errorf("/healthz with the model's port closed = %d:\n%s", code, body)
	}
	if strings.Contains(body, opsKey) {
		t.Error("/healthz shows the API key")
	}
}

func TestBinaryOpsPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tg, model := newTelegram(t), fakeopenai.New(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
http:
  listen: %s
models:
  - {name: default, model: fake-model, base_url: %s, api_key: k}
channels:
  telegram: {enabled: true, bot_token: %q, api_url: %s}
`, ln.Addr(), model.URL, tg.Token, tg.URL))
	_, errOut, code := deerflow(t, dir, "", nil, "serve", "--config", cfg)
	if code != 1 || !strings.Contains(errOut, "http.listen "+ln.Addr().String()) || !strings.Contains(errOut, "address already in use") {
		t.Errorf("serve with http.listen taken: exit %d, stderr:\n%s", code, errOut)
	}
}

// Telegram is not connected while its polls fail, and is again once they
// succeed.
func TestBinaryOpsTelegramPollFails(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "ok"} })
	addr := freeAddr(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
http:
  listen: %s
models:
  - {name: default, model: fake-model, base_url: %s, api_key: k}
channels:
  telegram: {enabled: true, bot_token: %q, api_url: %s}
memory:
  enabled: false
`, addr, model.URL, tg.Token, tg.URL))
	startBinaryServe(t, dir, cfg)
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })

	tg.FailAlways("getUpdates", faketelegram.Failure{Code: 502})
	tg.PushMessage(faketelegram.Private(ann, "wake the long poll")) // the next poll fails
	code, h, body := waitHealth(t, addr, "telegram disconnected", func(_ int, h health) bool { return !h.Channels["telegram"].Connected })
	if code != http.StatusServiceUnavailable || !strings.Contains(h.Channels["telegram"].Detail, "getUpdates failed: 502") {
		t.Errorf("/healthz while getUpdates fails = %d:\n%s", code, body)
	}
	if strings.Contains(body, tg.Token) {
		t.Error("/healthz shows the bot token")
	}
	tg.ClearFailures("getUpdates")
	waitHealth(t, addr, "telegram connected again", func(code int, h health) bool { return code == 200 && h.Channels["telegram"].Connected })
}
