package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

func startLark(t *testing.T, lk *fakelark.Server, model *fakeopenai.Server, dataDir string, edit ...func(*config.Config)) *serveRun {
	t.Helper()
	r := startServe(t, model, dataDir, append([]func(*config.Config){func(c *config.Config) {
		c.Channels.Lark = config.Lark{Enabled: true, AppID: lk.AppID, AppSecret: lk.AppSecret, Domain: lk.URL}
	}}, edit...)...)
	lk.WaitFor(lk.Connected)
	return r
}

// cardText is the markdown of an interactive card's content.
func cardText(content string) string {
	var c struct {
		Body struct {
			Elements []struct {
				Tag     string `json:"tag"`
				Content string `json:"content"`
			} `json:"elements"`
		} `json:"body"`
	}
	json.Unmarshal([]byte(content), &c)
	var b strings.Builder
	for _, e := range c.Body.Elements {
		if e.Tag == "markdown" {
			b.WriteString(e.Content)
		}
	}
	return b.String()
}

func waitCard(t *testing.T, lk *fakelark.Server, chat, want string) *fakelark.Sent {
	t.Helper()
	var found *fakelark.Sent
	lk.WaitFor(func() bool {
		for _, m := range lk.Messages(chat) {
			if m.MsgType == "interactive" && strings.Contains(cardText(m.Content), want) {
				found = m
				return true
			}
		}
		return false
	})
	if found == nil {
		var b strings.Builder
		for _, m := range lk.Messages(chat) {
			b.WriteString("\n  [" + m.MsgType + "] " + cardText(m.Content) + m.Content)
		}
		t.Fatalf("%s never showed %q:%s", chat, want, b.String())
	}
	return found
}

func TestLarkP2PConversation(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	model.Script(fakeopenai.Turn{Text: "Hi **Ann**."}, fakeopenai.Turn{Text: "You are Ann."})
	run := startLark(t, lk, model, t.TempDir())
	ev := lk.Send(fakelark.MessageEvent{ChatID: "oc_p2p", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text("hello, I'm Ann")})
	first := waitCard(t, lk, "oc_p2p", "Hi **Ann**.")
	run.app.router.WaitIdle(t.Context())
	question := lk.EventMessageID(ev)
	if first.ReplyTo != question {
		t.Errorf("the card replies to %q, want the question %q", first.ReplyTo, question)
	}
	lk.WaitFor(func() bool { return len(lk.Reactions(question)) > 0 })
	lk.Send(fakelark.MessageEvent{ChatID: "oc_p2p", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "post",
		Content: `{"title":"","content":[[{"tag":"text","text":"who am "},{"tag":"text","text":"I?"}]]}`})
	waitCard(t, lk, "oc_p2p", "You are Ann.")
	reqs := model.Requests()
	if got := reqs[1].Roles(); got != "system,user,assistant,user" || reqs[1].Last().Content != "who am I?" {
		t.Errorf("second turn saw %s / %q", got, reqs[1].Last().Content)
	}
	if codes := lk.EventAcks(ev); len(codes) == 0 || codes[0] != 200 {
		t.Errorf("event acks = %v", codes)
	}
}

func TestLarkGroupMentionsRepliesAndTopics(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "re: " + r.Last().Content} })
	run := startLark(t, lk, model, t.TempDir())
	bot := fakelark.Mention{Key: "@_user_1", OpenID: lk.BotOpenID, Name: "deerflow"}
	lk.Send(fakelark.MessageEvent{ChatID: "oc_g", ChatType: "group", SenderOpenID: "ou_bob", MessageType: "text", Content: fakelark.Text("lunch?")})
	lk.Send(fakelark.MessageEvent{ChatID: "oc_g", ChatType: "group", SenderOpenID: "ou_ann", MessageType: "text",
		Content: fakelark.Text("@_user_1 what is 2+2?"), Mentions: []fakelark.Mention{bot}})
	answer := waitCard(t, lk, "oc_g", "re: what is 2+2?")
	run.app.router.WaitIdle(t.Context())
	// Replying to the bot's card continues its conversation, no mention.
	lk.Send(fakelark.MessageEvent{ChatID: "oc_g", ChatType: "group", SenderOpenID: "ou_ann", MessageType: "text",
		Content: fakelark.Text("and times 3?"), ParentID: answer.MessageID, RootID: answer.RootID})
	waitCard(t, lk, "oc_g", "re: and times 3?")
	run.app.router.WaitIdle(t.Context())
	// A topic is one conversation of its own.
	lk.Send(fakelark.MessageEvent{ChatID: "oc_g", ChatType: "group", SenderOpenID: "ou_bob", MessageType: "text",
		Content: fakelark.Text("@_user_1 start a topic"), Mentions: []fakelark.Mention{bot}, ThreadID: "omt_1"})
	waitCard(t, lk, "oc_g", "re: start a topic")
	run.app.router.WaitIdle(t.Context())
	lk.Send(fakelark.MessageEvent{ChatID: "oc_g", ChatType: "group", SenderOpenID: "ou_bob", MessageType: "text",
		Content: fakelark.Text("@_user_1 more in the topic"), Mentions: []fakelark.Mention{bot}, ThreadID: "omt_1"})
	waitCard(t, lk, "oc_g", "re: more in the topic")
	run.app.router.WaitIdle(t.Context())

	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model ran %d times, want 4 (unaddressed chatter ignored)", len(reqs))
	}
	if reqs[0].Last().Content != "what is 2+2?" {
		t.Errorf("mention not stripped: %q", reqs[0].Last().Content)
	}
	if got := reqs[1].Roles(); got != "system,user,assistant,user" {
		t.Errorf("the reply to the card saw %s", got)
	}
	if got := reqs[2].Roles(); got != "system,user" {
		t.Errorf("the new topic saw %s", got)
	}
	if got := reqs[3].Roles(); got != "system,user,assistant,user" {
		t.Errorf("the topic's second message saw %s", got)
	}
}

func TestLarkStreamsByPatchingTheCard(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "Thinking out loud, then the **answer**.", Chunk: 10, HoldAfter: 2, Hold: hold})
	run := startLark(t, lk, model, t.TempDir())
	lk.Send(fakelark.MessageEvent{ChatID: "oc_s", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text("go")})
	progress := waitCard(t, lk, "oc_s", "Thinking")
	close(hold)
	final := waitCard(t, lk, "oc_s", "then the **answer**.")
	run.app.router.WaitIdle(t.Context())
	if final.MessageID != progress.MessageID || final.Patches < 1 {
		t.Errorf("the answer was not patched into one card (%s vs %s, %d patches)", progress.MessageID, final.MessageID, final.Patches)
	}
	if n := len(lk.Messages("oc_s")); n != 1 {
		t.Errorf("%d messages, want 1 card", n)
	}
}

func TestLarkRedeliveryAllowListAndReconnect(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "ok: " + r.Last().Content, Chunk: -1}
	})
	run := startLark(t, lk, model, t.TempDir(), func(c *config.Config) { c.Channels.Lark.AllowedUsers = []string{"ou_ann"} })
	lk.Send(fakelark.MessageEvent{ChatID: "oc_x", ChatType: "p2p", SenderOpenID: "ou_mallory", MessageType: "text", Content: fakelark.Text("let me in")})
	ev := lk.Send(fakelark.MessageEvent{ChatID: "oc_a", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text("once")})
	waitCard(t, lk, "oc_a", "ok: once")
	run.app.router.WaitIdle(t.Context())
	lk.Redeliver(ev)
	lk.WaitFor(func() bool { return len(lk.EventAcks(ev)) >= 2 && lk.EventAcks(ev)[1] == 200 })
	run.app.router.WaitIdle(t.Context())
	lk.DropConnection()
	lk.WaitFor(func() bool { return lk.Connections() >= 2 && lk.Connected() })
	lk.Send(fakelark.MessageEvent{ChatID: "oc_a", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text("after reconnect")})
	waitCard(t, lk, "oc_a", "ok: after reconnect")
	run.app.router.WaitIdle(t.Context())
	count := map[string]int{}
	for _, r := range model.Requests() {
		count[r.Last().Content]++
	}
	if count["let me in"] != 0 || count["once"] != 1 || count["after reconnect"] != 1 {
		t.Errorf("model runs = %v", count)
	}
}

func TestLarkFilesAndRateLimit(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	model.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "read_file", Arguments: `{"path":"/mnt/user-data/uploads/notes.txt"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: `{"path":"/mnt/user-data/outputs/out.txt","content":"done\n"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "present_files", Arguments: `{"filepaths":["/mnt/user-data/outputs/out.txt"]}`}}},
		fakeopenai.Turn{Text: "File sent.", Chunk: -1},
	)
	run := startLark(t, lk, model, t.TempDir())
	lk.AddResource("om_file_msg", "file_v2_1", []byte("remember the milk\n"))
	// The progress card and the first try of the final are refused.
	lk.FailNext("/open-apis/im/v1/messages/om_file_msg/reply", 429, 99991400, 1)
	lk.FailNext("/open-apis/im/v1/messages/om_file_msg/reply", 429, 99991400, 1)
	lk.Send(fakelark.MessageEvent{MessageID: "om_file_msg", ChatID: "oc_f", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "file",
		Content: `{"file_key":"file_v2_1","file_name":"notes.txt"}`})
	waitCard(t, lk, "oc_f", "File sent.")
	run.app.router.WaitIdle(t.Context())
	var sent *fakelark.Sent
	for _, m := range lk.Messages("oc_f") {
		if m.MsgType == "file" {
			sent = m
		}
	}
	if sent == nil || string(sent.Data) != "done\n" {
		t.Fatalf("the presented file was not sent: %+v", sent)
	}
	if got := model.Requests()[1].Last().Content; !strings.Contains(got, "remember the milk") {
		t.Errorf("read_file of the upload = %q", got)
	}
	limited := 0
	for _, c := range lk.Calls() {
		if c.Code == 99991400 {
			limited++
		}
	}
	if limited != 2 {
		t.Errorf("%d calls were rate limited, want 2 (the final must wait out the limit)", limited)
	}
}
