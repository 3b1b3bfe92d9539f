package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// withAgents configures two named agents; the bot answers as coder, the
// group chat -500 as researcher, and ann is the bot's admin.
func withAgents(c *config.Config) {
	c.Agents = []config.AgentDef{
		{Name: "coder", Description: "Writes code", Model: "big", Soul: "You are Coder, terse.", Tools: []string{"ls", "read_file"}, Memory: "shared"},
		{Name: "researcher", Description: "Digs deep", Soul: "You are Researcher, thorough.", Memory: "shared"},
	}
	c.Channels.Telegram.Agent = "coder"
	c.Channels.Telegram.ChatAgents = map[string]string{"-500": "researcher"}
	c.Channels.Telegram.Admins = []string{"@ann"}
}

// soulOf names which agent's soul a request's system message carries.
func soulOf(r fakeopenai.Request) string {
	sys := r.Messages[0].Content
	for _, s := range []string{"Coder", "Researcher", "Poet"} {
		if strings.Contains(sys, "You are "+s) {
			return s
		}
	}
	return "built-in"
}

// echoSoul answers with the agent whose soul the model was given.
func echoSoul(r fakeopenai.Request) fakeopenai.Turn {
	return fakeopenai.Turn{Text: "soul: " + soulOf(r) + " / " + r.Last().Content, Chunk: -1}
}

// TestAgentsBoundToBotAndChat: the bot's agent sends its soul and model
// to the model server and offers only its tools; a chat's binding
// overrides the bot's; /status names the agent.
func TestAgentsBoundToBotAndChat(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(echoSoul)
	run := startTelegram(t, tg, model, t.TempDir(), withAgents)
	tg.PushMessage(faketelegram.Private(bob, "hello"))
	run.waitFinal(tg, bob.ID, "soul: Coder / hello")
	group := faketelegram.Chat{ID: -500}
	tg.PushMessage(faketelegram.Group(group, bob, "@deerflow_test_bot dig into this"))
	run.waitFinal(tg, -500, "soul: Researcher / dig into this")

	reqs := model.Requests()
	if reqs[0].Model != "fake-big" || reqs[1].Model != "fake-model" {
		t.Errorf("models = %s, %s; want coder's fake-big, then the default", reqs[0].Model, reqs[1].Model)
	}
	if diff := cmp.Diff([]string{"ls", "read_file"}, sorted(reqs[0].ToolNames())); diff != "" {
		t.Errorf("coder's tools (-want +got):\n%s", diff)
	}
	if !slices.Contains(reqs[1].ToolNames(), "bash") || slices.Contains(reqs[1].ToolNames(), "setup_agent") {
		t.Errorf("researcher (all tools, bob no admin) was offered %v", reqs[1].ToolNames())
	}
	tg.PushMessage(faketelegram.Private(bob, "/status"))
	waitMessage(t, tg, bob.ID, "Agent: coder (this bot's agent)")
	waitMessage(t, tg, bob.ID, "Model: big (fake-big)")
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestAgentSwitchSurvivesRestartAndNew: /agent lists the agents, /agent
// NAME switches the conversation, and the choice holds after a restart
// and /new; /agent default returns to the bot's agent.
func TestAgentSwitchSurvivesRestartAndNew(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(echoSoul)
	dir := t.TempDir()
	run := startTelegram(t, tg, model, dir, withAgents)
	tg.PushMessage(faketelegram.Private(bob, "/agent"))
	list := waitMessage(t, tg, bob.ID, "• researcher — Digs deep")
	if !strings.Contains(list.PlainText, "Agent: coder (this bot's agent)") {
		t.Errorf("/agent said:\n%s", list.PlainText)
	}
	kb := tg.Keyboard(bob.ID, list.MessageID)
	if diff := cmp.Diff([]string{"default", "✓ coder", "researcher"}, buttonTexts(kb)); diff != "" {
		t.Errorf("/agent's buttons (-want +got):\n%s", diff)
	}
	pressAndWait(t, tg, bob, bob.ID, list.MessageID, kb[len(kb)-1][len(kb[len(kb)-1])-1].CallbackData)
	waitMessage(t, tg, bob.ID, "now answered by researcher")
	tg.PushMessage(faketelegram.Private(bob, "one"))
	run.waitFinal(tg, bob.ID, "soul: Researcher / one")
	run.stop()

	run = startTelegram(t, tg, model, dir, withAgents)
	tg.PushMessage(faketelegram.Private(bob, "/new"))
	waitMessage(t, tg, bob.ID, "new conversation")
	tg.PushMessage(faketelegram.Private(bob, "two"))
	run.waitFinal(tg, bob.ID, "soul: Researcher / two")
	tg.PushMessage(faketelegram.Private(bob, "/agent default"))
	waitMessage(t, tg, bob.ID, "back with coder")
	tg.PushMessage(faketelegram.Private(bob, "three"))
	run.waitFinal(tg, bob.ID, "soul: Coder / three")
}

// TestSetupAgentByAdminOnly: the bot's admin is offered setup_agent and
// the agent made with it answers at once after /agent; anyone else is
// not offered it, and a call to it is refused as an unknown tool.
func TestSetupAgentByAdminOnly(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	create := fakeopenai.ToolCall{Name: "setup_agent", Arguments: `{"name":"poet","description":"Writes poems","soul":"You are Poet, in rhyme."}`}
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "tool":
			return fakeopenai.Turn{Text: "tool said: " + last.Content, Chunk: -1}
		case strings.Contains(last.Content, "make a poet"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{create}}
		}
		return echoSoul(r)
	})
	run := startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) {
		withAgents(c)
		c.Channels.Telegram.Agent = "" // the built-in agent, all tools
	})
	tg.PushMessage(faketelegram.Private(bob, "make a poet"))
	run.waitFinal(tg, bob.ID, `tool said: Error: unknown tool "setup_agent"`)
	tg.PushMessage(faketelegram.Private(bob, "/agent poet"))
	waitMessage(t, tg, bob.ID, `no agent called "poet"`)
	bobs := model.Requests()

	tg.PushMessage(faketelegram.Private(ann, "make a poet"))
	run.waitFinal(tg, ann.ID, "tool said: Created the agent poet.")
	anns := model.Requests()[len(bobs):]
	tg.PushMessage(faketelegram.Private(bob, "/agent poet"))
	waitMessage(t, tg, bob.ID, "now answered by poet")
	tg.PushMessage(faketelegram.Private(bob, "a verse please"))
	run.waitFinal(tg, bob.ID, "soul: Poet / a verse please")

	for _, r := range bobs {
		if slices.Contains(r.ToolNames(), "setup_agent") {
			t.Errorf("setup_agent was offered to bob: %v", r.ToolNames())
		}
	}
	if !slices.Contains(anns[0].ToolNames(), "setup_agent") {
		t.Errorf("setup_agent was not offered to ann, the admin: %v", anns[0].ToolNames())
	}
}

// TestTwoBotsTwoAgents: two Telegram bots in one process, each bound to
// its own agent: each answers with its agent's soul and model, and
// /status on each names its own.
func TestTwoBotsTwoAgents(t *testing.T) {
	home, support := newTelegram(t), faketelegram.New(t, "654321:SUPPORT-token")
	model := fakeopenai.New(t)
	model.Handle(echoSoul)
	run := startServe(t, model, t.TempDir(), func(c *config.Config) {
		withAgents(c)
		c.Channels.Telegram = config.Telegram{Enabled: true, BotToken: home.Token, APIURL: home.URL, Agent: "coder",
			Bots: []config.Telegram{{Name: "support", Enabled: true, BotToken: support.Token, APIURL: support.URL, Agent: "researcher"}}}
	})
	home.PushMessage(faketelegram.Private(ann, "fix my loop"))
	run.waitFinal(home, ann.ID, "soul: Coder / fix my loop")
	support.PushMessage(faketelegram.Private(ann, "find me sources"))
	run.waitFinal(support, ann.ID, "soul: Researcher / find me sources")
	reqs := model.Requests()
	if reqs[0].Model != "fake-big" || reqs[1].Model != "fake-model" {
		t.Errorf("models = %s, %s; want coder's fake-big, researcher's default", reqs[0].Model, reqs[1].Model)
	}
	support.PushMessage(faketelegram.Private(ann, "/status"))
	waitMessage(t, support, ann.ID, "Agent: researcher (this bot's agent)")
}

// TestAPIAgents: GET /api/agents lists the agents; a run naming one (as
// agent, or LangGraph's assistant_id) answers as it; an unknown name is
// refused with 404 before anything runs.
func TestAPIAgents(t *testing.T) {
	model := fakeopenai.New(t)
	model.Handle(echoSoul)
	addr := freeAddr(t)
	cfg := testConfig(t, model, t.TempDir())
	withAgents(cfg)
	cfg.Channels.Telegram = config.Telegram{}
	cfg.HTTP = config.HTTP{Listen: addr, APIToken: apiToken}
	cfg.Shutdown.GraceSeconds = 0
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, io.Discard, nil) }()
	defer func() { cancel(); <-served }()
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	c := apiClient{t: t, base: "http://" + addr}

	var list struct {
		Agents []struct{ Name, Source, Model string }
	}
	c.call("GET", "/api/agents", nil, http.StatusOK, &list)
	if len(list.Agents) != 2 || list.Agents[0].Name != "coder" || list.Agents[0].Source != "config" || list.Agents[0].Model != "big" {
		t.Errorf("agents = %+v", list.Agents)
	}
	var assistants []struct {
		ID      string `json:"assistant_id"`
		GraphID string `json:"graph_id"`
	}
	c.call("POST", "/api/assistants/search", map[string]any{}, http.StatusOK, &assistants)
	if len(assistants) != 3 || assistants[0].ID != "lead_agent" || assistants[1].ID != "coder" || assistants[2].GraphID != "lead_agent" {
		t.Errorf("assistants = %+v", assistants)
	}
	id := c.thread()
	// An agent is named as DeerFlow's UI names it (context agent_name) or
	// as the assistant.
	for _, body := range []map[string]any{{"input": msg("hi"), "context": map[string]any{"agent_name": "coder"}}, {"input": msg("hi"), "assistant_id": "researcher"}, {"input": msg("hi"), "assistant_id": "lead_agent"}} {
		var r apiRun
		c.call("POST", "/api/threads/"+id+"/runs", body, http.StatusOK, &r)
		evs := c.stream(id, r.RunID).rest()
		ended(t, evs, "success")
		if a := answerOf(t, evs); !strings.HasPrefix(a, "soul: ") {
			t.Errorf("%v answered %q", body, a)
		}
	}
	var souls []string
	for _, r := range model.Requests() {
		souls = append(souls, soulOf(r))
	}
	if diff := cmp.Diff([]string{"Coder", "Researcher", "built-in"}, souls); diff != "" {
		t.Errorf("souls (-want +got):\n%s", diff)
	}
	if code, body := c.do("POST", "/api/threads/"+id+"/runs", map[string]any{"input": msg("hi"), "assistant_id": "ghost"}); code != http.StatusNotFound || !strings.Contains(string(body), `"detail"`) {
		t.Errorf("unknown agent: %d %s", code, body)
	}
}
