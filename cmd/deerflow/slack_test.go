package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
)

func startSlack(t *testing.T, sl *fakeslack.Server, model *fakeopenai.Server, dataDir string, edit ...func(*config.Config)) *serveRun {
	t.Helper()
	return startServe(t, model, dataDir, append([]func(*config.Config){func(c *config.Config) {
		c.Channels.Slack = config.Slack{Enabled: true, BotToken: sl.BotToken, AppToken: sl.AppToken, APIURL: sl.URL + "/api/"}
	}}, edit...)...)
}

func newSlack(t *testing.T) *fakeslack.Server {
	sl := fakeslack.New(t)
	sl.EchoBotMessages = true // like real Slack: our own posts come back as events
	return sl
}

// markdownOf returns the text of a posted message's markdown blocks.
func markdownOf(p *fakeslack.Posted) string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(p.Blocks, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "markdown" {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// waitPosted waits until a message in channel (thread or not) shows want
// in its markdown block (a finished answer) or text.
func waitPosted(t *testing.T, sl *fakeslack.Server, channel, want string, final bool) *fakeslack.Posted {
	t.Helper()
	var found *fakeslack.Posted
	sl.WaitFor(func() bool {
		for _, p := range sl.Messages(channel) {
			if (final && strings.Contains(markdownOf(p), want)) || (!final && strings.Contains(p.Text, want)) {
				found = p
				return true
			}
		}
		return false
	})
	if found == nil {
		var b strings.Builder
		for _, p := range sl.Messages(channel) {
			b.WriteString("\n  [" + p.ThreadTS + "] " + p.Text + " | md: " + markdownOf(p))
		}
		t.Fatalf("%s never showed %q:%s", channel, want, b.String())
	}
	return found
}

func TestSlackDirectMessage(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Script(fakeopenai.Turn{Text: "Hello **there**, how can I help?"}, fakeopenai.Turn{Text: "Still here."})
	run := startSlack(t, sl, model, t.TempDir())
	ts := sl.Message("D1", "im", "U1", "hi &amp; hello", "")
	p := waitPosted(t, sl, "D1", "Hello **there**, how can I help?", true)
	run.app.router.WaitIdle(t.Context())
	if p.ThreadTS != ts {
		t.Errorf("answer thread = %q, want the DM's ts %q", p.ThreadTS, ts)
	}
	if got := model.Requests()[0].Last().Content; got != "hi & hello" {
		t.Errorf("the model got %q", got)
	}
	sl.WaitFor(func() bool { return strings.Join(sl.Reactions("D1", ts), ",") == "white_check_mark" })
	// A later message in the thread continues the conversation.
	sl.Message("D1", "im", "U1", "are you there?", ts)
	waitPosted(t, sl, "D1", "Still here.", true)
	if got := model.Requests()[1].Roles(); got != "system,user,assistant,user" {
		t.Errorf("thread follow-up saw %s", got)
	}
	// The bot's own posts came back as events and were ignored.
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model ran %d times", n)
	}
}

func TestSlackMentionAnsweredOnceAndThreadContinues(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "re: " + r.Last().Content} })
	run := startSlack(t, sl, model, t.TempDir())
	sl.AddChannel("C1", "channel")
	sl.Message("C1", "channel", "U2", "random chatter", "")
	ts := sl.Mention("C1", "U1", "<@U0BOT> what is 2+2?", "")
	waitPosted(t, sl, "C1", "re: what is 2+2?", true)
	run.app.router.WaitIdle(t.Context())
	sl.Message("C1", "channel", "U1", "and times 3?", ts) // in the thread, no mention
	waitPosted(t, sl, "C1", "re: and times 3?", true)
	sl.Message("C1", "channel", "U2", "unrelated thread reply", "1699999999.000001")
	sl.Mention("C1", "U2", "<@U0BOT> new topic", "")
	waitPosted(t, sl, "C1", "re: new topic", true)
	run.app.router.WaitIdle(t.Context())

	reqs := model.Requests()
	if len(reqs) != 3 {
		var got []string
		for _, r := range reqs {
			got = append(got, r.Last().Content)
		}
		t.Fatalf("the model ran for %q; want each addressed message once", got)
	}
	if got := reqs[1].Roles(); got != "system,user,assistant,user" {
		t.Errorf("the thread reply saw %s", got)
	}
	if got := reqs[2].Roles(); got != "system,user" {
		t.Errorf("a new mention saw %s", got)
	}
	// Every envelope was acknowledged.
	sl.WaitFor(func() bool { return len(sl.Acks()) >= 6 })
}

func TestSlackAcksRetriesAndBadEnvelopes(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "ok: " + r.Last().Content} })
	run := startSlack(t, sl, model, t.TempDir())
	sl.AddChannel("C1", "channel")
	sl.SendRaw(`{"envelope_id":"env-bad","type":"events_api","payload":{"type":"event_callback","event_id":"EvBad","event":{"type":"no_such_event_type","ts":[1,2]}}}`)
	sl.WaitFor(func() bool { return sl.Acked("env-bad") })
	ts := sl.Message("D9", "im", "U1", "once please", "")
	waitPosted(t, sl, "D9", "ok: once please", true)
	// An edit of the message arrives: not a new question.
	sl.Edit("D9", ts, "edited text")
	sl.Message("D9", "im", "U1", "second", "")
	waitPosted(t, sl, "D9", "ok: second", true)
	run.app.router.WaitIdle(t.Context())
	count := map[string]int{}
	for _, r := range model.Requests() {
		count[r.Last().Content]++
	}
	if count["once please"] != 1 || count["edited text"] != 0 {
		t.Errorf("model runs = %v", count)
	}
}

func TestSlackRetryOfAnsweredEventIsDropped(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "ok: " + r.Last().Content} })
	run := startSlack(t, sl, model, t.TempDir())
	evID := sl.SendEvent(map[string]any{"type": "message", "channel_type": "im", "channel": "D5", "user": "U1", "text": "just once", "ts": "1700000100.000100", "event_ts": "1700000100.000100"})
	waitPosted(t, sl, "D5", "ok: just once", true)
	sl.Retry(evID)
	sl.Message("D5", "im", "U1", "next", "")
	waitPosted(t, sl, "D5", "ok: next", true)
	run.app.router.WaitIdle(t.Context())
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model ran %d times; the retried event must be dropped", n)
	}
}

func TestSlackSlashCommandIsEphemeral(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	startSlack(t, sl, model, t.TempDir())
	sl.AddChannel("C1", "channel")
	sl.SlashCommand("C1", "U1", "/deerflow", "status")
	sl.WaitFor(func() bool {
		for _, p := range sl.Messages("C1") {
			if p.Ephemeral && p.User == "U1" && strings.Contains(p.Text, "Model: default") {
				return true
			}
		}
		return false
	})
	for _, p := range sl.Messages("C1") {
		if !p.Ephemeral {
			t.Errorf("a slash command's reply was posted for everyone: %q", p.Text)
		}
	}
}

func TestSlackFilesInAndOut(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "read_file", Arguments: `{"path":"/mnt/user-data/uploads/data.csv"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: `{"path":"/mnt/user-data/outputs/report.md","content":"rows: 2\n"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "present_files", Arguments: `{"filepaths":["/mnt/user-data/outputs/report.md"]}`}}},
		fakeopenai.Turn{Text: "Report attached."},
	)
	run := startSlack(t, sl, model, t.TempDir())
	f := sl.AddFile("F1", "data.csv", []byte("a,b\n1,2\n"))
	ts := sl.ShareFile("D2", "im", "U1", "analyse this", "", f)
	waitPosted(t, sl, "D2", "Report attached.", true)
	run.app.router.WaitIdle(t.Context())
	var up *fakeslack.UploadedFile
	for _, p := range sl.Messages("D2") {
		if len(p.Files) > 0 && p.ThreadTS == ts {
			up = &p.Files[0]
		}
	}
	if up == nil || up.Name != "report.md" || string(up.Data) != "rows: 2\n" {
		t.Fatalf("uploaded into the thread: %+v", up)
	}
	reqs := model.Requests()
	if u := reqs[0].Last().Content; !strings.Contains(u, "/mnt/user-data/uploads/data.csv") || !strings.Contains(u, "analyse this") {
		t.Errorf("the model was told %q", u)
	}
	if got := reqs[1].Last().Content; !strings.Contains(got, "1,2") {
		t.Errorf("read_file of the upload = %q", got)
	}
}

func TestSlackAllowListRateLimitAndReconnect(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "ok: " + r.Last().Content, Chunk: -1}
	})
	run := startSlack(t, sl, model, t.TempDir(), func(c *config.Config) { c.Channels.Slack.AllowedUsers = []string{"U1"} })
	sl.Message("D3", "im", "U7", "let me in", "")
	sl.FailNext("chat.postMessage", 429, 1, "")
	sl.Message("D4", "im", "U1", "busy", "")
	waitPosted(t, sl, "D4", "ok: busy", true)

	sl.Disconnect("refresh_requested")
	sl.Message("D4", "im", "U1", "after refresh", "")
	waitPosted(t, sl, "D4", "ok: after refresh", true)
	sl.DropSocket()
	sl.Message("D4", "im", "U1", "after drop", "")
	waitPosted(t, sl, "D4", "ok: after drop", true)
	run.app.router.WaitIdle(t.Context())
	count := map[string]int{}
	for _, r := range model.Requests() {
		count[r.Last().Content]++
	}
	if count["let me in"] != 0 || count["busy"] != 1 || count["after refresh"] != 1 || count["after drop"] != 1 {
		t.Errorf("model runs = %v", count)
	}
	if sl.Connections() < 3 {
		t.Errorf("connections = %d, want reconnects", sl.Connections())
	}
}

func TestSlackLongAnswerIsSplit(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	var b strings.Builder
	b.WriteString("Intro.\n\n```go\n")
	for b.Len() < 20000 {
		b.WriteString("fmt.Println(\"" + strings.Repeat("y", 60) + "\")\n")
	}
	b.WriteString("```\n\nThe end.")
	model.Script(fakeopenai.Turn{Text: b.String(), Chunk: -1})
	run := startSlack(t, sl, model, t.TempDir())
	sl.Message("D6", "im", "U1", "everything", "")
	waitPosted(t, sl, "D6", "The end.", true)
	run.app.router.WaitIdle(t.Context())
	parts := 0
	for _, p := range sl.Messages("D6") {
		md := markdownOf(p)
		if md == "" {
			continue
		}
		parts++
		if len(md) > 12000 {
			t.Errorf("a markdown block has %d chars", len(md))
		}
		if strings.Count(md, "```")%2 != 0 {
			t.Errorf("a part leaves a code fence open")
		}
	}
	if parts < 2 {
		t.Errorf("%d parts, want the answer split", parts)
	}
}

func TestSlackStreamsWithUpdates(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "Partial thoughts first, then the **conclusion**.", Chunk: 12, HoldAfter: 3, Hold: hold})
	run := startSlack(t, sl, model, t.TempDir())
	ts := sl.Message("D7", "im", "U1", "think aloud", "")
	progress := waitPosted(t, sl, "D7", "Partial", false)
	if got := sl.Status("D7", ts); got == "" {
		t.Error("no thinking status was set")
	}
	if r := sl.Reactions("D7", ts); strings.Join(r, ",") != "eyes" {
		t.Errorf("reactions while working = %v, want eyes", r)
	}
	close(hold)
	final := waitPosted(t, sl, "D7", "then the **conclusion**.", true)
	run.app.router.WaitIdle(t.Context())
	if final.TS != progress.TS || final.Updates < 1 {
		t.Errorf("the answer was not streamed into one message (progress %s, final %s, %d updates)", progress.TS, final.TS, final.Updates)
	}
	if final.ThreadTS != ts {
		t.Errorf("the answer is not in the thread")
	}
}
