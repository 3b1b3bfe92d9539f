package agents

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/store"
)

func registry(t *testing.T, st *store.Store) *Registry {
	return New(Options{
		Store: st,
		Config: []config.AgentDef{
			{Name: "coder", Description: "Writes code", Model: "fast", Soul: "Be terse.", Tools: []string{"bash", "read_file", SetupTool}, Memory: "own"},
			{Name: "researcher", Description: "Digs", MCPServers: []string{"docs"}, Memory: "shared"},
		},
		Bindings: map[string]Binding{
			"telegram":         {Default: "coder", Chats: map[string]string{"-100": "researcher"}, Admins: []string{"@ann", "42"}},
			"telegram-support": {},
		},
		ServerOf: func(tool string) (string, bool) {
			srv, _, ok := strings.Cut(tool, "_")
			return srv, ok && (srv == "docs" || srv == "github")
		},
		KnownModel: func(n string) bool { return n == "fast" || n == "default" },
		KnownTool:  func(n string) bool { return n != "nonsense" },
		KnownSkill: func(n string) bool { return n == "deep-research" },
	})
}

// TestWhoAnswers: /agent's choice, then the chat's binding, then the
// bot's default, then the built-in agent; a choice survives reopening
// the store and is undone by choosing "".
func TestWhoAnswers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deerflow.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := registry(t, st)
	private := &bus.Inbound{Channel: "telegram", ChatID: "7", UserID: "7"}
	group := &bus.Inbound{Channel: "telegram", ChatID: "-100", UserID: "7"}
	other := &bus.Inbound{Channel: "telegram-support", ChatID: "7", UserID: "7"}
	check := func(in *bus.Inbound, name string, src Source) {
		t.Helper()
		d, got, ok := r.For(in)
		if d.Name != name || got != src || ok != (name != "") {
			t.Errorf("%s: %q (%s), want %q (%s)", in.ChatKey(), d.Name, got, name, src)
		}
	}
	check(private, "coder", BotBound)
	check(group, "researcher", ChatBound)
	check(other, "", BuiltIn)
	if err := r.Choose(group.ChatKey(), "coder"); err != nil {
		t.Fatal(err)
	}
	if err := r.Choose(other.ChatKey(), "nobody"); err == nil {
		t.Error("chose an agent that does not exist")
	}
	st.Close()
	st, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r = registry(t, st)
	check(group, "coder", Chosen)
	r.Choose(group.ChatKey(), "")
	check(group, "researcher", ChatBound)
}

// TestPersonaTools: an agent's exact tool list, its MCP servers, and
// setup_agent for admins only, whatever the agent.
func TestPersonaTools(t *testing.T) {
	r := registry(t, testutil.Store(t))
	admin := &bus.Inbound{Channel: "telegram", ChatID: "5", UserID: "5", UserName: "Ann"}
	user := &bus.Inbound{Channel: "telegram", ChatID: "6", UserID: "6", UserName: "bob"}
	group := &bus.Inbound{Channel: "telegram", ChatID: "-100", UserID: "42"}
	allowed := func(in *bus.Inbound, tools ...string) map[string]bool {
		p := r.Persona(in)
		out := map[string]bool{}
		for _, tl := range tools {
			out[tl] = p == nil || p.Allow == nil || p.Allow(tl)
		}
		return out
	}
	tools := []string{"bash", "web_fetch", SetupTool, "docs_search", "github_issue"}
	want := map[*bus.Inbound]map[string]bool{
		admin: {"bash": true, "web_fetch": false, SetupTool: true, "docs_search": false, "github_issue": false},
		user:  {"bash": true, "web_fetch": false, SetupTool: false, "docs_search": false, "github_issue": false},
		group: {"bash": true, "web_fetch": true, SetupTool: true, "docs_search": true, "github_issue": false},
	}
	for in, w := range want {
		if diff := cmp.Diff(w, allowed(in, tools...)); diff != "" {
			t.Errorf("%s/%s (-want +got):\n%s", in.ChatKey(), in.UserID, diff)
		}
	}
	p := r.Persona(admin)
	if p.Name != "coder" || p.Soul != "Be terse." || p.Model != "fast" || MemoryKey(p, "telegram:5") != "agent:coder|telegram:5" {
		t.Errorf("persona = %+v", p)
	}
	if MemoryKey(r.Persona(group), "telegram:42") != "telegram:42" {
		t.Error("shared memory is keyed apart")
	}
	built := r.Persona(&bus.Inbound{Channel: "telegram-support", ChatID: "1", UserID: "1"})
	if built == nil || built.Allow(SetupTool) || !built.Allow("bash") {
		t.Errorf("the built-in agent of a non-admin: %+v", built)
	}
}

// TestSetupAgent: a chat-created agent is checked, stored, listed after
// the config's, updated in place, and deleted; config agents can't be
// changed from a chat.
func TestSetupAgent(t *testing.T) {
	r := registry(t, testutil.Store(t))
	bad := []struct {
		d    Def
		says string
	}{
		{Def{Name: "Bad Name", Soul: "x"}, "not valid"},
		{Def{Name: "coder", Soul: "x"}, "config file"},
		{Def{Name: "x", Soul: "x", Model: "huge"}, `no model called "huge"`},
		{Def{Name: "x", Soul: "x", Tools: []string{"nonsense"}}, `no tool called "nonsense"`},
		{Def{Name: "x", Soul: "x", Skills: []string{"magic"}}, `no skill called "magic"`},
		{Def{Name: "x"}, "description and a soul"},
	}
	for _, b := range bad {
		if _, err := r.Put(b.d); err == nil || !strings.Contains(err.Error(), b.says) {
			t.Errorf("Put(%+v) = %v, want %q", b.d, err, b.says)
		}
	}
	if up, err := r.Put(Def{Name: "writer", Description: "Writes prose", Soul: "Be warm.", CreatedBy: "telegram:5"}); err != nil || up {
		t.Fatalf("Put = %v, %v", up, err)
	}
	if up, err := r.Put(Def{Name: "writer", Description: "Writes poems", Soul: "Rhyme.", CreatedBy: "telegram:5"}); err != nil || !up {
		t.Fatalf("second Put = %v, %v", up, err)
	}
	defs, _ := r.List()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"coder", "researcher", "writer"}, names); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	if d, _ := r.Get("writer"); d.Description != "Writes poems" || !d.FromChat() {
		t.Errorf("writer = %+v", d)
	}
	if err := r.Delete("coder"); err == nil {
		t.Error("deleted a config agent")
	}
	if err := r.Delete("writer"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Get("writer"); ok {
		t.Error("writer is still there")
	}
}

// TestCheck: deerflow check names each unknown tool, skill and bound
// agent by its config key; MCP tools pass (known once servers run).
func TestCheck(t *testing.T) {
	cfg := config.Default()
	cfg.MCP.Servers = []config.MCPServer{{Name: "docs", URL: "http://127.0.0.1:1/mcp"}}
	cfg.Agents = []config.AgentDef{{Name: "coder", Tools: []string{"bash", "nonsense", "docs_search", SetupTool}, Skills: []string{"deep-research", "nope"}}}
	cfg.Channels.Telegram.Enabled, cfg.Channels.Telegram.BotToken = true, "1:x"
	cfg.Channels.Telegram.Agent = "ghost"
	cfg.Channels.Telegram.ChatAgents = map[string]string{"-100": "coder", "-200": "phantom"}
	got := Check(cfg, []string{"bash", "ls"}, []string{"deep-research"})
	want := []string{
		`agents[0].tools[1]: agent "coder": no tool called "nonsense"`,
		`agents[0].skills[1]: agent "coder": no skill called "nope"`,
		`channels.telegram.agent: no agent called "ghost" in agents`,
		`channels.telegram.chat_agents.-200: no agent called "phantom" in agents`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
