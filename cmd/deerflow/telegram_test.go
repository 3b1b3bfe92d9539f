package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

var (
	ann = faketelegram.User{ID: 1001, FirstName: "Ann", Username: "ann"}
	bob = faketelegram.User{ID: 1002, FirstName: "Bob", Username: "bob"}
)

// serveRun is deerflow serve with the Telegram channel, wired as the command
// wires it, against the fake Bot API and the fake model.
type serveRun struct {
	n      int // channels running
	t      *testing.T
	app    *app
	cancel context.CancelFunc
	errc   <-chan error
	closed bool
}

func startTelegram(t *testing.T, tg *faketelegram.Server, model *fakeopenai.Server, dataDir string, edit ...func(*config.Config)) *serveRun {
	t.Helper()
	return startServe(t, model, dataDir, append([]func(*config.Config){func(c *config.Config) {
		c.Channels.Telegram = config.Telegram{Enabled: true, BotToken: tg.Token, APIURL: tg.URL}
	}}, edit...)...)
}

// startServe is deerflow serve wired as the command wires it, with the
// channels the edits enable.
func startServe(t *testing.T, model *fakeopenai.Server, dataDir string, edit ...func(*config.Config)) *serveRun {
	t.Helper()
	return startServeLog(t, model, dataDir, testLogger(), edit...)
}

// startServeLog is startServe logging to log.
func startServeLog(t *testing.T, model *fakeopenai.Server, dataDir string, log *slog.Logger, edit ...func(*config.Config)) *serveRun {
	t.Helper()
	cfg := testConfig(t, model, dataDir)
	for _, f := range edit {
		f(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := newApp(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	chans, err := platformChannels(cfg, a)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc, err := startChannels(ctx, a, chans)
	if err != nil {
		t.Fatal(err)
	}
	r := &serveRun{t: t, app: a, cancel: cancel, errc: errc, n: len(chans)}
	t.Cleanup(r.stop)
	return r
}

// stop shuts deerflow down the way SIGTERM does.
func (r *serveRun) stop() {
	if r.closed {
		return
	}
	r.closed = true
	r.cancel()
	for i := 0; i < r.n; i++ {
		if err := <-r.errc; err != nil {
			r.t.Errorf("channel: %v", err)
		}
	}
	r.app.shutdown(0) // no grace: tests that hold a reply want it cancelled
}

func newTelegram(t *testing.T) *faketelegram.Server {
	return faketelegram.New(t, "123456:TEST-token")
}

// waitMessage waits until a bot message in chat shows want and returns it.
func waitMessage(t *testing.T, tg *faketelegram.Server, chat int64, want string) *faketelegram.SentMessage {
	t.Helper()
	return waitMessageIn(t, tg, chat, want)
}

// waitFinal waits until a bot message in chat shows want and every run
// has finished, then returns the message as it ends up.
func (r *serveRun) waitFinal(tg *faketelegram.Server, chat int64, want string) *faketelegram.SentMessage {
	r.t.Helper()
	m := waitMessageIn(r.t, tg, chat, want)
	r.app.router.WaitIdle(context.Background())
	for _, cur := range tg.Messages(chat) {
		if cur.MessageID == m.MessageID {
			return cur
		}
	}
	return m
}

func waitMessageIn(t *testing.T, tg *faketelegram.Server, chat int64, want string) *faketelegram.SentMessage {
	t.Helper()
	var found *faketelegram.SentMessage
	tg.WaitFor(func() bool {
		for _, m := range tg.Messages(chat) {
			if strings.Contains(m.PlainText, want) {
				found = m
				return true
			}
		}
		return false
	})
	if found == nil {
		var errs []string
		for _, c := range tg.Calls() {
			if c.Status != 200 {
				errs = append(errs, c.Method+": "+c.Error)
			}
		}
		t.Fatalf("chat %d never showed %q; messages: %s\nrefused calls: %q", chat, want, dump(tg.Messages(chat)), errs)
	}
	return found
}

func dump(ms []*faketelegram.SentMessage) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("\n  [" + m.ParseMode + "] " + m.PlainText)
	}
	return b.String()
}

func TestTelegramPrivateConversation(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Script(
		// A first answer slow enough for "typing…" to show (after 100 ms).
		fakeopenai.Turn{Text: "Hello **Ann**, nice to meet you.", Chunk: -1, Delay: 300 * time.Millisecond},
		fakeopenai.Turn{Text: "You told me your name: Ann."},
	)
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "hi, I'm Ann"))
	m := run.waitFinal(tg, ann.ID, "nice to meet you")
	if m.ParseMode != "HTML" || !strings.Contains(m.Text, "<b>Ann</b>") || m.PlainText != "Hello Ann, nice to meet you." {
		t.Errorf("final message = %q (%s) shown as %q", m.Text, m.ParseMode, m.PlainText)
	}
	tg.PushMessage(faketelegram.Private(ann, "what is my name?"))
	run.waitFinal(tg, ann.ID, "You told me your name")
	if got := model.Requests()[1].Roles(); got != "system,user,assistant,user" {
		t.Errorf("second turn saw %s", got)
	}
	var names []string
	for _, c := range tg.Commands() {
		names = append(names, c.Command)
	}
	if got := strings.Join(names, ","); got != "new,status,stop,retry,research,models,agent,memory,skills,schedules,unschedule,goal,plan,help" {
		t.Errorf("registered commands = %s", got)
	}
	if len(tg.CallsOf("sendChatAction")) == 0 {
		t.Error("no typing action while working")
	}
	for _, c := range tg.CallsOf("sendMessage") {
		if c.Params["reply_parameters"] != "" {
			t.Errorf("private answers should not quote the question: %v", c.Params)
		}
	}
}

func TestTelegramGroupMentionsAndReplyChains(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	answerEach(model)
	run := startTelegram(t, tg, model, t.TempDir())
	group := faketelegram.Chat{ID: -100200300, Type: "supergroup", Title: "Team"}

	tg.PushMessage(faketelegram.Group(group, bob, "lunch at noon?"))
	q := tg.PushMessage(faketelegram.Group(group, ann, "@deerflow_test_bot what is 2+2?"))
	first := run.waitFinal(tg, group.ID, "answer to: what is 2+2?")
	if first.ReplyTo != q.Message.MessageID {
		t.Errorf("the answer replies to %d, want the question %d", first.ReplyTo, q.Message.MessageID)
	}
	// A reply to the bot's answer continues that conversation, without a
	// mention.
	tg.PushMessage(faketelegram.ReplyTo(faketelegram.Group(group, ann, "and times 3?"), first.Message))
	run.waitFinal(tg, group.ID, "answer to: and times 3?")
	// A fresh mention starts a new conversation; a command for another bot
	// is not ours.
	tg.PushMessage(faketelegram.Group(group, bob, "/status@other_bot"))
	tg.PushMessage(faketelegram.Group(group, bob, "@deerflow_test_bot unrelated question"))
	run.waitFinal(tg, group.ID, "answer to: unrelated question")

	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3 (unaddressed messages must be ignored)", len(reqs))
	}
	if got := reqs[1].Roles(); got != "system,user,assistant,user" {
		t.Errorf("the reply saw %s, want the first exchange before it", got)
	}
	if got := reqs[2].Roles(); got != "system,user" {
		t.Errorf("the fresh mention saw %s, want a new conversation", got)
	}
	if reqs[0].Last().Content != "what is 2+2?" {
		t.Errorf("mention not stripped: %q", reqs[0].Last().Content)
	}
}

func TestTelegramForumTopics(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "topic answer to: " + r.Last().Content}
	})
	startTelegram(t, tg, model, t.TempDir())
	forum := faketelegram.Chat{ID: -100900, Type: "supergroup", Title: "Forum", IsForum: true}
	tg.AddChat(forum)
	tg.AddTopic(forum.ID, 7)
	tg.AddTopic(forum.ID, 9)

	tg.PushMessage(faketelegram.InTopic(faketelegram.Group(forum, ann, "@deerflow_test_bot plan the trip"), 7))
	m := waitMessage(t, tg, forum.ID, "topic answer to: plan the trip")
	if m.ThreadID != 7 {
		t.Errorf("answer went to thread %d, want topic 7", m.ThreadID)
	}
	tg.PushMessage(faketelegram.InTopic(faketelegram.Group(forum, bob, "@deerflow_test_bot budget?"), 9))
	if m := waitMessage(t, tg, forum.ID, "topic answer to: budget?"); m.ThreadID != 9 {
		t.Errorf("answer went to thread %d, want topic 9", m.ThreadID)
	}
	tg.PushMessage(faketelegram.InTopic(faketelegram.Group(forum, ann, "@deerflow_test_bot and the hotel?"), 7))
	waitMessage(t, tg, forum.ID, "topic answer to: and the hotel?")
	tg.PushMessage(faketelegram.Group(forum, ann, "@deerflow_test_bot in general"))
	if m := waitMessage(t, tg, forum.ID, "topic answer to: in general"); m.ThreadID != 0 {
		t.Errorf("a General message was answered in thread %d", m.ThreadID)
	}
	reqs := model.Requests()
	if got := reqs[2].Roles(); got != "system,user,assistant,user" {
		t.Errorf("topic 7's second message saw %s", got)
	}
	if got := reqs[1].Roles(); got != "system,user" {
		t.Errorf("topic 9 saw %s; topics must not share a conversation", got)
	}
	for _, c := range tg.CallsOf("sendChatAction") {
		if c.Params["chat_id"] == "-100900" && c.Params["message_thread_id"] == "" && c.Status == 200 {
			continue // the General message
		}
	}
}

func TestTelegramStreamsByEditing(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "Streaming answers arrive piece by piece, then **settle**.", Chunk: 10, HoldAfter: 2, Hold: hold})
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "stream please"))
	// The partial answer is shown before the model has finished.
	waitMessage(t, tg, ann.ID, "Streaming")
	close(hold)
	m := run.waitFinal(tg, ann.ID, "then settle.")
	msgs := tg.Messages(ann.ID)
	if len(msgs) != 1 || m.Edits < 1 || m.ParseMode != "HTML" {
		t.Fatalf("want one message edited into the final answer; got %d messages, %d edits:%s", len(msgs), m.Edits, dump(msgs))
	}
}

func TestTelegramLongAnswerIsSplit(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	var b strings.Builder
	b.WriteString("Here is the full listing.\n\n```go\n")
	for i := 0; b.Len() < 6000; i++ {
		b.WriteString("fmt.Println(\"line " + strings.Repeat("x", 40) + "\") // 🦌 < & >\n")
	}
	b.WriteString("```\n\n")
	for b.Len() < 10500 {
		b.WriteString("Closing words with *emphasis* and a [link](https://example.com). ")
	}
	answer := b.String()
	model.Script(fakeopenai.Turn{Text: answer, Chunk: -1})
	startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "show me everything"))
	waitMessage(t, tg, ann.ID, "Closing words")
	tg.WaitFor(func() bool { return len(tg.Messages(ann.ID)) >= 3 })
	msgs := tg.Messages(ann.ID)
	var all strings.Builder
	pre := 0
	for _, m := range msgs {
		if n := len(utf16.Encode([]rune(m.PlainText))); n > 4096 {
			t.Errorf("a message has %d UTF-16 units", n)
		}
		if strings.Contains(m.Text, "<pre>") {
			pre++
		}
		all.WriteString(m.PlainText)
	}
	if pre < 2 {
		t.Errorf("the code block was not continued across messages (%d with <pre>)", pre)
	}
	if got, want := strings.Count(all.String(), "fmt.Println"), strings.Count(answer, "fmt.Println"); got != want {
		t.Errorf("%d code lines arrived, want %d", got, want)
	}
	for _, c := range tg.Calls() {
		if c.Status != 200 && c.Method != "getUpdates" {
			t.Errorf("Telegram refused %s: %s", c.Method, c.Error)
		}
	}
}

func TestTelegramFilesInAndOut(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "read_file", Arguments: `{"path":"/mnt/user-data/uploads/notes.txt"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: `{"path":"/mnt/user-data/outputs/summary.md","content":"# Summary\nbuy milk\n"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "present_files", Arguments: `{"filepaths":["/mnt/user-data/outputs/summary.md"]}`}}},
		fakeopenai.Turn{Text: "Summary attached."},
	)
	startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) { c.Sandbox.MaxUploadMB = 1 })
	tg.AddFile("doc-1", []byte("buy milk\nbuy eggs\n"))
	msg := faketelegram.Private(ann, "")
	msg.Caption = "summarise this"
	msg.Document = &faketelegram.Document{FileID: "doc-1", FileUniqueID: "u1", FileName: "notes.txt", FileSize: 18}
	tg.PushMessage(msg)
	waitMessage(t, tg, ann.ID, "Summary attached.")
	tg.WaitFor(func() bool {
		for _, m := range tg.Messages(ann.ID) {
			if m.Document != nil {
				return true
			}
		}
		return false
	})
	var doc *faketelegram.SentFile
	for _, m := range tg.Messages(ann.ID) {
		if m.Document != nil {
			doc = m.Document
		}
	}
	if doc.Filename != "summary.md" || string(doc.Data) != "# Summary\nbuy milk\n" {
		t.Errorf("document sent = %s %q", doc.Filename, doc.Data)
	}
	reqs := model.Requests()
	if u := reqs[0].Last().Content; !strings.Contains(u, "/mnt/user-data/uploads/notes.txt") || !strings.Contains(u, "summarise this") {
		t.Errorf("the model was told %q", u)
	}
	if r := reqs[1].Last().Content; !strings.Contains(r, "buy eggs") {
		t.Errorf("read_file of the upload = %q", r)
	}

	// A file over the limit is refused in one sentence and never fetched.
	big := faketelegram.Private(ann, "")
	big.Document = &faketelegram.Document{FileID: "doc-big", FileUniqueID: "u2", FileName: "video.mp4", FileSize: 5 << 20}
	tg.PushMessage(big)
	waitMessage(t, tg, ann.ID, "video.mp4: it is larger than the upload limit of 1 MB")
	for _, c := range tg.CallsOf("getFile") {
		if c.Params["file_id"] == "doc-big" {
			t.Error("the oversized file was downloaded")
		}
	}
}

func TestTelegramAllowList(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "hello " + r.Last().Content} })
	run := startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) { c.Channels.Telegram.AllowedUsers = []string{"@ANN"} })
	tg.PushMessage(faketelegram.Private(bob, "let me in"))
	tg.PushMessage(faketelegram.Private(bob, "/status"))
	tg.PushMessage(faketelegram.Private(ann, "it's me"))
	waitMessage(t, tg, ann.ID, "hello it's me")
	if n := len(tg.Messages(bob.ID)); n != 0 {
		t.Errorf("bob got %d messages", n)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model ran %d times", n)
	}
	if _, err := run.app.store.ChatThread("telegram:1002"); err == nil {
		t.Error("a conversation was stored for a user outside the allow-list")
	}
}

func TestTelegramRestartLosesAndRepeatsNothing(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "first answer", Hold: hold})
	answerEach(model)
	dir := t.TempDir()
	run := startTelegram(t, tg, model, dir)
	tg.PushMessage(faketelegram.Private(ann, "one"))
	model.WaitRequests(1)
	second := tg.PushMessage(faketelegram.Private(ann, "two"))
	tg.PushMessage(faketelegram.Private(ann, "three"))
	waitMessage(t, tg, ann.ID, "(2 waiting)") // both queued and stored
	run.stop()                                // SIGTERM while "one" runs and two wait

	run = startTelegram(t, tg, model, dir)
	waitMessage(t, tg, ann.ID, "answer to: two")
	waitMessage(t, tg, ann.ID, "answer to: three")
	tg.PushMessage(faketelegram.Private(ann, "four"))
	waitMessage(t, tg, ann.ID, "answer to: four")
	run.stop()

	count := map[string]int{}
	for _, r := range model.Requests() {
		count[r.Last().Content]++
	}
	if count["two"] != 1 || count["three"] != 1 || count["four"] != 1 {
		t.Errorf("model runs per message = %v, want each once", count)
	}
	// After the restart, polling resumed after the last stored update:
	// nothing was delivered twice.
	offsets := tg.Offsets()
	sawRestart := false
	for _, off := range offsets {
		if off > second.UpdateID {
			sawRestart = true
		}
		if sawRestart && off <= second.UpdateID {
			t.Errorf("polled from offset %d after update %d was stored", off, second.UpdateID)
		}
	}
	if len(tg.Pending()) != 0 {
		t.Errorf("updates left unconfirmed: %v", tg.Pending())
	}
}

func TestTelegramRateLimitsAndErrors(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "reply to " + r.Last().Content, Chunk: -1}
	})
	startTelegram(t, tg, model, t.TempDir())
	tg.FailNext("sendMessage", faketelegram.Failure{Code: 429, RetryAfter: 1})
	tg.FailNext("sendMessage", faketelegram.Failure{Code: 429, RetryAfter: 1})
	tg.PushMessage(faketelegram.Private(ann, "busy day"))
	waitMessage(t, tg, ann.ID, "reply to busy day")

	// Blocked by a user: the answer fails quietly, and when they write
	// again the bot answers again.
	tg.FailNext("sendMessage", faketelegram.Failure{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	tg.PushMessage(faketelegram.Private(bob, "hello"))
	tg.WaitFor(func() bool {
		for _, c := range tg.CallsOf("sendMessage") {
			if c.Status == 403 {
				return true
			}
		}
		return false
	})
	tg.PushMessage(faketelegram.Private(bob, "unblocked now"))
	waitMessage(t, tg, bob.ID, "reply to unblocked now")
}

// testLogger discards logs unless DEERFLOW_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("DEERFLOW_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// TestBinaryServeTelegram runs the built binary as an operator would:
// `deerflow serve --config` with Telegram pointed at the fake, a message
// answered, then SIGTERM: it exits 0 and a second start resumes cleanly.
func TestBinaryServeTelegram(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "served: " + r.Last().Content}
	})
	dir := t.TempDir()
	cfgPath := telegramConfig(t, dir, model.URL, "${TG_TOKEN}", tg.URL)
	serve := func() *exec.Cmd { return startBinaryServe(t, dir, cfgPath, "TG_TOKEN="+tg.Token) }
	stop := func(cmd *exec.Cmd) {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve after SIGTERM: %v, want exit 0", err)
		}
	}
	cmd := serve()
	tg.PushMessage(faketelegram.Private(ann, "hello binary"))
	waitMessage(t, tg, ann.ID, "served: hello binary")
	stop(cmd)

	cmd = serve()
	tg.PushMessage(faketelegram.Private(ann, "again"))
	waitMessage(t, tg, ann.ID, "served: again")
	stop(cmd)
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model ran %d times, want 2", n)
	}
}

// TestTelegramQuickAnswerIsOneMessage: an answer ready within a moment is
// sent once, formatted, not as a plain preview and then its edit.
func TestTelegramQuickAnswerIsOneMessage(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Script(fakeopenai.Turn{Text: "**Quick** answer."})
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "hi"))
	m := run.waitFinal(tg, ann.ID, "Quick answer.")
	if sends, edits := len(tg.CallsOf("sendMessage")), len(tg.CallsOf("editMessageText")); sends != 1 || edits != 0 {
		t.Fatalf("%d sendMessage and %d editMessageText calls for one quick answer, want 1 and 0", sends, edits)
	}
	if m.ParseMode != "HTML" {
		t.Fatalf("the answer was not sent formatted: %+v", m)
	}
}
