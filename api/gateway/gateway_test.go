package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/documents"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/skills"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/uploads"
)

// harness is a gateway on a real sandbox, intake, skills manager and
// store, behind the same body limit api.Server puts on every request.
type harness struct {
	t      *testing.T
	srv    *httptest.Server
	sb     *sandbox.Manager
	store  *store.Store
	skills *skills.Manager
	g      *Gateway
}

func newHarness(t *testing.T, cfg *config.Config, maxBody int64) *harness {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{DataDir: t.TempDir(), DeferProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	st := testutil.Store(t)
	sk, err := skills.New(skills.Options{Store: st, CustomDir: t.TempDir(), Admins: cfg.Skills.Admins, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	in := uploads.New(uploads.Options{Sandbox: sb, Converter: &documents.Converter{}, MaxBytes: int64(cfg.Sandbox.MaxUploadMB) << 20, Logger: slog.New(slog.DiscardHandler)})
	g := New(Options{Config: cfg, Files: sb, Intake: in, Skills: sk, Store: st, Scheduler: true, MaxBody: maxBody, Logger: slog.New(slog.DiscardHandler)})
	mux := http.NewServeMux()
	g.Register(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody) // as api.Server.ServeHTTP
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &harness{t: t, srv: srv, sb: sb, store: st, skills: sk, g: g}
}

// do sends a request and returns the status, the headers and the body.
func (h *harness) do(method, path, ctype string, body io.Reader) (int, http.Header, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, data
}

// json sends a request and decodes the answer, which must have status.
func (h *harness) json(method, path string, body any, status int) map[string]any {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	code, hdr, data := h.do(method, path, "application/json", rd)
	if code != status || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		h.t.Fatalf("%s %s: %d %s %s, want %d", method, path, code, hdr.Get("Content-Type"), data, status)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		h.t.Fatalf("%s %s: %v: %s", method, path, err, data)
	}
	return v
}

// hasKeys fails unless obj has every key (the frontend's field names).
func hasKeys(t *testing.T, what string, obj any, keys ...string) map[string]any {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("%s: not an object: %#v", what, obj)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no %q in %v", what, k, m)
		}
	}
	return m
}

func on(b bool) *bool { return &b }

func testConfig() *config.Config {
	cfg := &config.Config{}
	cfg.Sandbox.MaxUploadMB = 50
	cfg.Memory.Enabled = true
	cfg.Models = []config.Model{
		{Name: "fast", Model: "gpt-x-mini", APIKey: "sk-secret", BaseURL: "https://u:pw@api.example/v1", Description: "quick"},
		{Name: "deep", Model: "thinker-1", Thinking: config.Thinking{Enabled: on(true)}, ReasoningEffort: "high", SupportsVision: true},
	}
	cfg.MCP.Servers = []config.MCPServer{
		{Name: "files", Command: "mcp-files", Args: []string{"--api-key", "k1", "--token=t1", "https://u:pw@h/x?key=s"}, Env: map[string]string{"TOKEN": "abc"}},
		{Name: "remote", URL: "https://mcp.example/mcp?api_key=zzz", Headers: map[string]string{"Authorization": "Bearer zzz"}},
	}
	cfg.Channels.Telegram = config.Telegram{Enabled: true, BotToken: "123:abc"}
	return cfg
}

// TestGatewayAuth: setup is done and the operator is an admin.
func TestGatewayAuth(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	st := h.json("GET", "/api/v1/auth/setup-status", nil, 200)
	if st["needs_setup"] != false {
		t.Errorf("setup-status %v", st)
	}
	me := hasKeys(t, "me", h.json("GET", "/api/v1/auth/me", nil, 200), "id", "email", "system_role", "needs_setup", "oauth_provider")
	if me["id"] != "default" || me["system_role"] != "admin" || me["needs_setup"] != false || !strings.Contains(me["email"].(string), "@") {
		t.Errorf("me %v", me)
	}
	h.json("POST", "/api/v1/auth/logout", nil, 200)
}

// TestGatewayConfigViews: features, models and MCP (masked) in the shapes
// the frontend reads.
func TestGatewayConfigViews(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	f := h.json("GET", "/api/features", nil, 200)
	for k, want := range map[string]bool{"agents_api": false, "browser_control": false, "mcp_tasks": false, "uploads": true, "scheduled_tasks": true} {
		if got := hasKeys(t, k, f[k], "enabled")["enabled"]; got != want {
			t.Errorf("features.%s = %v", k, got)
		}
	}
	m := h.json("GET", "/api/models", nil, 200)
	hasKeys(t, "token_usage", m["token_usage"], "enabled")
	models := m["models"].([]any)
	if len(models) != 2 {
		t.Fatalf("models %v", models)
	}
	deep := hasKeys(t, "model", models[1], "id", "name", "model", "display_name", "description", "supports_thinking", "supports_reasoning_effort")
	if deep["name"] != "deep" || deep["model"] != "thinker-1" || deep["supports_thinking"] != true || deep["supports_reasoning_effort"] != true || deep["supports_vision"] != true {
		t.Errorf("deep %v", deep)
	}
	if one := h.json("GET", "/api/models/fast", nil, 200); one["supports_thinking"] != false || one["description"] != "quick" {
		t.Errorf("fast %v", one)
	}
	if d := h.json("GET", "/api/models/nope", nil, 404); d["detail"] == "" {
		t.Errorf("missing model %v", d)
	}
	_, _, raw := h.do("GET", "/api/models", "", nil)
	mcpBody := h.json("GET", "/api/mcp/config", nil, 200)
	_, _, mcpRaw := h.do("GET", "/api/mcp/config", "", nil)
	for _, secret := range []string{"sk-secret", "pw@", "abc", "zzz", "k1", "t1", "key=s"} {
		if bytes.Contains(raw, []byte(secret)) || bytes.Contains(mcpRaw, []byte(secret)) {
			t.Errorf("%q shown: %s %s", secret, raw, mcpRaw)
		}
	}
	servers := mcpBody["mcp_servers"].(map[string]any)
	files := hasKeys(t, "files", servers["files"], "enabled", "description", "type", "command", "args", "env")
	if files["type"] != "stdio" || files["enabled"] != true || files["env"].(map[string]any)["TOKEN"] != "***" {
		t.Errorf("files %v", files)
	}
	if remote := hasKeys(t, "remote", servers["remote"], "url", "headers"); remote["type"] != "http" {
		t.Errorf("remote %v", remote)
	}
	if d := h.json("PUT", "/api/mcp/config", map[string]any{"mcp_servers": map[string]any{}}, 501); d["detail"] == "" {
		t.Errorf("mcp put %v", d)
	}
}

// TestGatewayChannels: the three platforms, the configured one on; no
// connections; suggestions off.
func TestGatewayChannels(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	ch := h.json("GET", "/api/channels/providers", nil, 200)
	provs := ch["providers"].([]any)
	if ch["enabled"] != true || len(provs) != 3 {
		t.Fatalf("channels %v", ch)
	}
	tg := hasKeys(t, "telegram", provs[0], "provider", "display_name", "enabled", "configured", "connectable", "unavailable_reason", "auth_mode", "connection_status", "credential_fields")
	if tg["provider"] != "telegram" || tg["enabled"] != true || tg["configured"] != true || tg["connectable"] != false {
		t.Errorf("telegram %v", tg)
	}
	if sl := provs[1].(map[string]any); sl["enabled"] != false || provs[2].(map[string]any)["provider"] != "feishu" {
		t.Errorf("slack/lark %v", provs)
	}
	if c := h.json("GET", "/api/channels/connections", nil, 200); len(c["connections"].([]any)) != 0 {
		t.Errorf("connections %v", c)
	}
	if s := hasKeys(t, "suggestions", h.json("GET", "/api/suggestions/config", nil, 200), "enabled", "max_suggestions"); s["enabled"] != false {
		t.Errorf("suggestions %v", s)
	}
}

// TestGatewaySkills: the list, and switching one off and on through the
// skills manager; with skills.admins not listing the operator, 403.
func TestGatewaySkills(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	list := h.json("GET", "/api/skills", nil, 200)["skills"].([]any)
	if len(list) == 0 {
		t.Fatal("no skills listed")
	}
	first := hasKeys(t, "skill", list[0], "name", "description", "category", "license", "enabled", "editable")
	name := first["name"].(string)
	if first["enabled"] != true || first["category"] != "public" {
		t.Errorf("skill %v", first)
	}
	if s := h.json("PUT", "/api/skills/"+name, map[string]any{"enabled": false}, 200); s["enabled"] != false {
		t.Errorf("after disable %v", s)
	}
	if _, ok := h.skills.Lookup(name); ok {
		t.Error("the manager still has it on")
	}
	if s := h.json("PUT", "/api/skills/"+name, map[string]any{"enabled": true}, 200); s["enabled"] != true {
		t.Errorf("after enable %v", s)
	}
	h.json("PUT", "/api/skills/no-such-skill", map[string]any{"enabled": true}, 404)
	h.json("PUT", "/api/skills/"+name, map[string]any{}, 422)
	h.json("POST", "/api/skills/install", map[string]any{"thread_id": "t", "path": "x"}, 501)

	cfg := testConfig()
	cfg.Skills.Admins = []string{"telegram:1"}
	h2 := newHarness(t, cfg, 1<<20)
	if d := h2.json("PUT", "/api/skills/"+name, map[string]any{"enabled": false}, 403); !strings.Contains(d["detail"].(string), "skills.admins") {
		t.Errorf("non-admin %v", d)
	}
}

// TestGatewayMemory: a user's memory in DeerFlow's UserMemory shape, the
// operator's without user_id; writes are refused.
func TestGatewayMemory(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	when := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	err := h.store.Update(func(tx *store.Tx) error {
		return tx.PutMemory(&store.Memory{Scope: "api:alice", Work: store.Summary{Text: "builds Go services", Updated: when},
			Facts: []store.Fact{{ID: "f1", Content: "likes tea", Category: "preference", Confidence: 0.9, Created: when, Source: "thread-1"}}, Updated: when})
	})
	if err != nil {
		t.Fatal(err)
	}
	m := hasKeys(t, "memory", h.json("GET", "/api/memory?user_id=alice", nil, 200), "version", "lastUpdated", "user", "history", "facts")
	user := hasKeys(t, "user", m["user"], "workContext", "personalContext", "topOfMind")
	work := hasKeys(t, "workContext", user["workContext"], "summary", "updatedAt")
	hasKeys(t, "history", m["history"], "recentMonths", "earlierContext", "longTermBackground")
	if work["summary"] != "builds Go services" || work["updatedAt"] != "2026-03-01T12:00:00Z" {
		t.Errorf("work %v", work)
	}
	facts := m["facts"].([]any)
	if len(facts) != 1 {
		t.Fatalf("facts %v", facts)
	}
	f := hasKeys(t, "fact", facts[0], "id", "content", "category", "confidence", "createdAt", "source")
	if f["content"] != "likes tea" || f["confidence"] != 0.9 {
		t.Errorf("fact %v", f)
	}
	op := h.json("GET", "/api/memory/export", nil, 200)
	if op["scope"] != "api:default" || len(op["facts"].([]any)) != 0 {
		t.Errorf("operator memory %v", op)
	}
	h.json("DELETE", "/api/memory", nil, 501)
	h.json("POST", "/api/memory/facts", map[string]any{"content": "x"}, 501)
	h.json("DELETE", "/api/memory/facts/f1", nil, 501)
	h.json("GET", "/api/memory?user_id=a%01b", nil, 400)
}

func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return v
}
