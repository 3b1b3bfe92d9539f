package main

// End-to-end fault tests: the real wiring against fake platforms and a fake
// model that misbehave (rate limits, server errors, timeouts, cut streams,
// dropped sockets). They assert what a person in the chat sees, and that
// the bot waits as long as the platform asked, by the fakes' own clocks.

import (
	"bytes"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// faultLog keeps what deerflow logs during a test.
type faultLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *faultLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if os.Getenv("DEERFLOW_TEST_LOG") != "" {
		os.Stderr.Write(p)
	}
	return l.b.Write(p)
}

func (l *faultLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// warned reports whether a WARN or ERROR line contains every one of subs.
func (l *faultLog) warned(subs ...string) bool {
	for line := range strings.Lines(l.String()) {
		if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
			continue
		}
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			return true
		}
	}
	return false
}

// startLogged is startServe with deerflow's log kept in logs.
func startLogged(t *testing.T, model *fakeopenai.Server, dataDir string, logs *faultLog, edit ...func(*config.Config)) *serveRun {
	t.Helper()
	r := startServeLog(t, model, dataDir, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), edit...)
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("deerflow log:\n%s", logs)
		}
	})
	return r
}

func telegramOn(tg *faketelegram.Server) func(*config.Config) {
	return func(c *config.Config) {
		c.Channels.Telegram = config.Telegram{Enabled: true, BotToken: tg.Token, APIURL: tg.URL}
	}
}

// echoModel answers every request with "reply to **<the user's text>**",
// in one delta. The bold tells the finished answer (shown as "reply to
// <text>") from the streamed progress message.
func echoModel(t *testing.T) *fakeopenai.Server {
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "reply to **" + r.Last().Content + "**", Chunk: -1}
	})
	return model
}

// tgCallsTo returns the sendMessage and editMessageText calls to chat.
func tgCallsTo(tg *faketelegram.Server, chat int64) []faketelegram.Call {
	id := strconv.FormatInt(chat, 10)
	var out []faketelegram.Call
	for _, c := range tg.Calls() {
		if (c.Method == "sendMessage" || c.Method == "editMessageText") && c.Params["chat_id"] == id {
			out = append(out, c)
		}
	}
	return out
}

// checkTelegramWaits fails the test if a message call to chat went out
// before the retry_after of an earlier 429 to that chat had passed, by the
// fake's clock.
func checkTelegramWaits(t *testing.T, tg *faketelegram.Server, chat int64) {
	t.Helper()
	var until time.Time
	var from faketelegram.Call
	for _, c := range tgCallsTo(tg, chat) {
		if c.Time.Before(until) {
			t.Errorf("chat %d: %s went out %v after a 429 (%s) asked to wait %v",
				chat, c.Method, c.Time.Sub(from.Time).Round(time.Millisecond), from.Method, until.Sub(from.Time))
		}
		if c.Status == 429 {
			var n int
			fmt.Sscanf(c.Error, "Too Many Requests: retry after %d", &n)
			if end := c.Time.Add(time.Duration(n) * time.Second); end.After(until) {
				until, from = end, c
			}
		}
	}
}

// waitAnswer waits until a finished answer (sent or edited as Telegram
// HTML) in chat shows want, and returns it.
func waitAnswer(t *testing.T, tg *faketelegram.Server, chat int64, want string) *faketelegram.SentMessage {
	t.Helper()
	var found *faketelegram.SentMessage
	tg.WaitFor(func() bool {
		for _, m := range tg.Messages(chat) {
			if m.ParseMode == "HTML" && strings.Contains(m.PlainText, want) {
				found = m
				return true
			}
		}
		return false
	})
	if found == nil {
		t.Fatalf("chat %d never showed the answer %q:%s", chat, want, dump(tg.Messages(chat)))
	}
	return found
}

// tgAnswers returns the bot's messages in chat that contain text.
func tgAnswers(tg *faketelegram.Server, chat int64, text string) []*faketelegram.SentMessage {
	var out []*faketelegram.SentMessage
	for _, m := range tg.Messages(chat) {
		if strings.Contains(m.PlainText, text) {
			out = append(out, m)
		}
	}
	return out
}

func countStatus(calls []faketelegram.Call, method string, status int) int {
	n := 0
	for _, c := range calls {
		if c.Method == method && c.Status == status {
			n++
		}
	}
	return n
}

// TestFaultTelegramBursts: several 429s and 5xx in a row on sendMessage and
// on the final editMessageText. Every answer arrives once, in one message,
// and nothing goes to the chat before Telegram's retry_after has passed.
func TestFaultTelegramBursts(t *testing.T) {
	t.Parallel()
	tg, model, logs := newTelegram(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, telegramOn(tg))
	carol := faketelegram.User{ID: 1003, FirstName: "Carol", Username: "carol"}

	// Three 429s on sendMessage: the progress message, if it goes first,
	// takes one; the answer waits out the rest. (Each step in a chat of
	// its own, away from the others' pauses.)
	for range 3 {
		tg.FailNext("sendMessage", faketelegram.Failure{Code: 429, RetryAfter: 1})
	}
	tg.PushMessage(faketelegram.Private(ann, "first"))
	waitAnswer(t, tg, ann.ID, "reply to first")
	if n := countStatus(tgCallsTo(tg, ann.ID), "sendMessage", 429); n != 3 {
		t.Errorf("%d sendMessage calls were refused, want all 3 injected", n)
	}

	// The progress message is up; then the final edit meets 429, a proxy's
	// 502 page and a 500 before it lands.
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "reply to **second**", Chunk: -1, HoldAfter: 2, Hold: hold})
	tg.PushMessage(faketelegram.Private(bob, "second"))
	waitMessage(t, tg, bob.ID, "reply to **second**")
	tg.FailNext("editMessageText", faketelegram.Failure{Code: 429, RetryAfter: 1})
	tg.FailNext("editMessageText", faketelegram.Failure{Code: 502, Body: "<html><body><h1>502 Bad Gateway</h1></body></html>"})
	tg.FailNext("editMessageText", faketelegram.Failure{Code: 500, Description: "Internal Server Error"})
	close(hold)
	if m := waitAnswer(t, tg, bob.ID, "reply to second"); m.Edits != 1 {
		t.Errorf("the progress message was edited %d times, want once into the answer", m.Edits)
	}

	// 5xx on sendMessage: the answer is sent again, once.
	tg.FailNext("sendMessage", faketelegram.Failure{Code: 500, Description: "Internal Server Error"})
	tg.FailNext("sendMessage", faketelegram.Failure{Code: 502, Body: "<html>502 Bad Gateway</html>"})
	tg.PushMessage(faketelegram.Private(carol, "third"))
	waitAnswer(t, tg, carol.ID, "reply to third")
	run.app.router.WaitIdle(t.Context())

	refused := 0
	for i, u := range []faketelegram.User{ann, bob, carol} {
		want := "reply to " + []string{"first", "second", "third"}[i]
		if got := tgAnswers(tg, u.ID, want); len(got) != 1 || len(tg.Messages(u.ID)) != 1 {
			t.Errorf("%s's chat shows %q in %d messages, want one message in all:%s", u.FirstName, want, len(got), dump(tg.Messages(u.ID)))
		}
		for _, c := range tgCallsTo(tg, u.ID) {
			if c.Status != 200 {
				refused++
			}
		}
		checkTelegramWaits(t, tg, u.ID)
	}
	if refused != 8 {
		t.Errorf("%d calls were refused, want the 8 injected", refused)
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("the model ran %d times, want 3", n)
	}
	if strings.Contains(logs.String(), tg.Token) {
		t.Error("the bot token is in the log (failed calls' URLs carry it)")
	}
}

// TestFaultTelegramRefusalsOutlastRetries: Telegram keeps refusing to edit
// the progress message for longer than the bot retries. The person still
// gets the whole answer, once, in a new message, and the next message is
// answered. (When new messages are refused too, see the Slack and Lark
// tests: the bot gives up and logs it.)
func TestFaultTelegramRefusalsOutlastRetries(t *testing.T) {
	t.Parallel()
	tg, model, logs := newTelegram(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, telegramOn(tg))

	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "Part one. Part **two**.", Chunk: 10, HoldAfter: 2, Hold: hold})
	tg.PushMessage(faketelegram.Private(ann, "tell me"))
	progress := waitMessage(t, tg, ann.ID, "Part one.")
	tg.FailAlways("editMessageText", faketelegram.Failure{Code: 429, RetryAfter: 1})
	close(hold)
	answer := waitAnswer(t, tg, ann.ID, "Part one. Part two.")
	run.app.router.WaitIdle(t.Context())
	tg.ClearFailures("editMessageText")
	if answer.MessageID == progress.MessageID {
		t.Fatal("an edit went through although Telegram refused them all")
	}
	if got := tgAnswers(tg, ann.ID, "Part two"); len(got) != 1 {
		t.Errorf("the answer shows in %d messages, want 1:%s", len(got), dump(tg.Messages(ann.ID)))
	}
	if n := countStatus(tgCallsTo(tg, ann.ID), "editMessageText", 429); n > 5 {
		t.Errorf("the bot tried %d refused edits; it should give up after a few", n)
	}

	tg.PushMessage(faketelegram.Private(ann, "hello again"))
	waitAnswer(t, tg, ann.ID, "reply to hello again")
	if n := len(tg.Messages(ann.ID)); n != 3 {
		t.Errorf("%d messages, want the progress message that could not be edited, the answer, the next answer:%s", n, dump(tg.Messages(ann.ID)))
	}
	checkTelegramWaits(t, tg, ann.ID)
}

// TestFaultTelegramManyChatsRateLimited: twenty conversations at once, the
// first twenty sends refused with 429: every one is answered exactly once,
// each chat waiting out its own retry_after.
func TestFaultTelegramManyChatsRateLimited(t *testing.T) {
	t.Parallel()
	tg, model, logs := newTelegram(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, telegramOn(tg))
	const n = 20
	for range n {
		tg.FailNext("sendMessage", faketelegram.Failure{Code: 429, RetryAfter: 1})
	}
	users := make([]faketelegram.User, n)
	for i := range users {
		users[i] = faketelegram.User{ID: int64(3000 + i), FirstName: fmt.Sprintf("User%d", i)}
		tg.PushMessage(faketelegram.Private(users[i], fmt.Sprintf("question %d", i)))
	}
	for i, u := range users {
		waitAnswer(t, tg, u.ID, fmt.Sprintf("reply to question %d", i))
	}
	run.app.router.WaitIdle(t.Context())
	refused := 0
	for _, u := range users {
		if msgs := tg.Messages(u.ID); len(msgs) != 1 {
			t.Errorf("chat %d has %d messages, want its one answer:%s", u.ID, len(msgs), dump(msgs))
		}
		refused += countStatus(tgCallsTo(tg, u.ID), "sendMessage", 429)
		checkTelegramWaits(t, tg, u.ID)
	}
	if refused != n {
		t.Errorf("%d sends were refused, want the %d injected", refused, n)
	}
	if got := len(model.Requests()); got != n {
		t.Errorf("the model ran %d times, want %d", got, n)
	}
}

func slackOn(sl *fakeslack.Server) func(*config.Config) {
	return func(c *config.Config) {
		c.Channels.Slack = config.Slack{Enabled: true, BotToken: sl.BotToken, AppToken: sl.AppToken, APIURL: sl.URL + "/api/"}
	}
}

// slackCallsTo returns the chat.postMessage and chat.update calls into
// channel.
func slackCallsTo(sl *fakeslack.Server, channel string) []fakeslack.Call {
	var out []fakeslack.Call
	for _, c := range sl.Calls() {
		if (c.Method == "chat.postMessage" || c.Method == "chat.update") && c.Form["channel"] == channel {
			out = append(out, c)
		}
	}
	return out
}

// checkSlackWaits fails the test if a message call into channel went out
// before the Retry-After (retryAfter, as injected) of an earlier 429 had
// passed, by the fake's clock.
func checkSlackWaits(t *testing.T, sl *fakeslack.Server, channel string, retryAfter time.Duration) {
	t.Helper()
	var until time.Time
	var from fakeslack.Call
	for _, c := range slackCallsTo(sl, channel) {
		if c.Time.Before(until) {
			t.Errorf("%s: %s went out %v after a 429 (%s) asked to wait %v",
				channel, c.Method, c.Time.Sub(from.Time).Round(time.Millisecond), from.Method, retryAfter)
		}
		if c.Status == 429 {
			until, from = c.Time.Add(retryAfter), c
		}
	}
}

// slackShowing returns the bot's messages in channel whose markdown (a
// finished answer) contains want.
func slackShowing(sl *fakeslack.Server, channel, want string) []*fakeslack.Posted {
	var out []*fakeslack.Posted
	for _, p := range sl.Messages(channel) {
		if strings.Contains(markdownOf(p), want) {
			out = append(out, p)
		}
	}
	return out
}

func dumpSlack(sl *fakeslack.Server, channel string) string {
	var b strings.Builder
	for _, p := range sl.Messages(channel) {
		fmt.Fprintf(&b, "\n  [%s] %s | md: %s", p.TS, p.Text, markdownOf(p))
	}
	return b.String()
}

// TestFaultSlackBursts: 429s with Retry-After and 5xx in a row on
// chat.postMessage and on the final chat.update. Every answer arrives once
// and nothing is posted into the channel before Retry-After has passed.
func TestFaultSlackBursts(t *testing.T) {
	t.Parallel()
	sl, model, logs := newSlack(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, slackOn(sl))

	// Each step in a DM of its own: Slack's one-post-a-second per channel
	// would otherwise make the test slow.
	for range 3 {
		sl.FailNext("chat.postMessage", 429, 1, "")
	}
	sl.Message("D1", "im", "U1", "first", "")
	waitPosted(t, sl, "D1", "reply to **first**", true)

	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "reply to **second**", Chunk: -1, HoldAfter: 2, Hold: hold})
	sl.Message("D2", "im", "U1", "second", "")
	progress := waitPosted(t, sl, "D2", "reply to **second**", false)
	sl.FailNext("chat.update", 429, 1, "")
	sl.FailNext("chat.update", 503, 0, "")
	sl.FailNext("chat.update", 500, 0, "")
	close(hold)
	if final := waitPosted(t, sl, "D2", "reply to **second**", true); final.TS != progress.TS {
		t.Errorf("the answer was posted anew (%s) instead of replacing the progress message %s", final.TS, progress.TS)
	}

	sl.FailNext("chat.postMessage", 500, 0, "")
	sl.FailNext("chat.postMessage", 502, 0, "")
	sl.Message("D3", "im", "U1", "third", "")
	waitPosted(t, sl, "D3", "reply to **third**", true)
	run.app.router.WaitIdle(t.Context())

	refused := 0
	for i, want := range []string{"first", "second", "third"} {
		ch := fmt.Sprintf("D%d", i+1)
		if got := slackShowing(sl, ch, "reply to **"+want+"**"); len(got) != 1 || len(sl.Messages(ch)) != 1 {
			t.Errorf("%s: the answer to %q shows in %d messages, want one message in all:%s", ch, want, len(got), dumpSlack(sl, ch))
		}
		for _, c := range slackCallsTo(sl, ch) {
			if c.Status != 200 {
				refused++
			}
		}
		checkSlackWaits(t, sl, ch, time.Second)
	}
	if refused != 8 {
		t.Errorf("%d calls were refused, want the 8 injected", refused)
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("the model ran %d times, want 3", n)
	}
}

// TestFaultSlackRefusalsOutlastRetries: Slack refuses every post (503)
// for longer than the bot retries: the bot gives up after a few tries and
// logs it, and the next message is answered. (A refused update of the
// progress message is covered by the Telegram and Lark tests: the answer
// then arrives in a new message.)
func TestFaultSlackRefusalsOutlastRetries(t *testing.T) {
	t.Parallel()
	sl, model, logs := newSlack(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, slackOn(sl))

	sl.FailAlways("chat.postMessage", 503, 0, "")
	sl.Message("D3", "im", "U1", "are you there?", "")
	model.WaitRequests(1)
	run.app.router.WaitIdle(t.Context())
	sl.ClearFailures("chat.postMessage")
	if tries := len(slackCallsTo(sl, "D3")); tries < 2 || tries > 6 {
		t.Errorf("the bot made %d refused posts for one answer; want a few retries, then giving up", tries)
	}
	if !logs.warned("D3", "503") {
		t.Error("the undeliverable answer was not logged")
	}
	sl.Message("D3", "im", "U1", "hello again", "")
	waitPosted(t, sl, "D3", "reply to **hello again**", true)
	if n := len(sl.Messages("D3")); n != 1 {
		t.Errorf("%d messages in D3, want only the answer to the next message:%s", n, dumpSlack(sl, "D3"))
	}
}

func larkOn(lk *fakelark.Server) func(*config.Config) {
	return func(c *config.Config) {
		c.Channels.Lark = config.Lark{Enabled: true, AppID: lk.AppID, AppSecret: lk.AppSecret, Domain: lk.URL}
	}
}

// larkMessageCalls returns the replies (new cards) and card patches the
// bot made.
func larkMessageCalls(lk *fakelark.Server) []fakelark.Call {
	var out []fakelark.Call
	for _, c := range lk.Calls() {
		if strings.HasPrefix(c.Path, "/open-apis/im/v1/messages/") &&
			(c.Method == "POST" && strings.HasSuffix(c.Path, "/reply") || c.Method == "PATCH") {
			out = append(out, c)
		}
	}
	return out
}

// checkLarkWaits fails the test if a reply or patch went out before the
// reset of an earlier rate-limited one had passed, by the fake's clock.
// Calls count as one chat's when their path names one of ids (the
// questions replied to, the cards patched); none means every call.
func checkLarkWaits(t *testing.T, lk *fakelark.Server, ids ...string) {
	t.Helper()
	var until time.Time
	var from fakelark.Call
	for _, c := range larkMessageCalls(lk) {
		mine := len(ids) == 0
		for _, id := range ids {
			mine = mine || strings.Contains(c.Path, "/"+id)
		}
		if !mine {
			continue
		}
		if c.Time.Before(until) {
			t.Errorf("%s %s went out %v after %d asked to wait until %v",
				c.Method, c.Path, c.Time.Sub(from.Time).Round(time.Millisecond), from.Code, until.Sub(from.Time))
		}
		switch c.Code {
		case fakelark.CodeRateLimited, fakelark.CodeChatRateLimit, fakelark.CodeSendRateLimit:
			// As injected: a reset of 1 s, or none, which means wait a second.
			until, from = c.Time.Add(time.Second), c
		}
	}
}

// larkShowing returns the bot's cards in chat that show want.
func larkShowing(lk *fakelark.Server, chat, want string) []*fakelark.Sent {
	var out []*fakelark.Sent
	for _, m := range lk.Messages(chat) {
		if m.MsgType == "interactive" && strings.Contains(cardText(m.Content), want) {
			out = append(out, m)
		}
	}
	return out
}

func dumpLark(lk *fakelark.Server, chat string) string {
	var b strings.Builder
	for _, m := range lk.Messages(chat) {
		fmt.Fprintf(&b, "\n  [%s %s, %d patches] %s", m.MessageID, m.MsgType, m.Patches, cardText(m.Content))
	}
	return b.String()
}

func larkText(lk *fakelark.Server, id, chat, text string) string {
	return lk.Send(fakelark.MessageEvent{MessageID: id, ChatID: chat, ChatType: "p2p", SenderOpenID: "ou_ann", Content: fakelark.Text(text)})
}

// TestFaultLarkBursts: Lark's rate limits (99991400 with a reset, a
// chat's 230020, the app's 11232) and 5xx in a row on the reply that posts
// the card and on the final patch. Every answer arrives once and nothing
// goes out before the limit's reset.
func TestFaultLarkBursts(t *testing.T) {
	t.Parallel()
	lk, model, logs := fakelark.New(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, larkOn(lk))
	lk.WaitFor(lk.Connected)

	// Three chats at once; each failure is aimed at one chat's calls.
	// In oc_2 the progress card is up; then the final patch meets the
	// app's message limit, a 500 and the gateway's 504 before it lands.
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "reply to **second**", Chunk: -1, HoldAfter: 2, Hold: hold})
	larkText(lk, "om_q2", "oc_2", "second")
	progress := waitCard(t, lk, "oc_2", "reply to **second**")
	patch := "/open-apis/im/v1/messages/" + progress.MessageID
	lk.FailNext(patch, 400, fakelark.CodeSendRateLimit, 0)
	lk.FailNext(patch, 500, 1, 0)
	lk.FailNext(patch, 504, 1, 0)

	// In oc_1 the replies meet the gateway's limit and the chat's.
	reply := "/open-apis/im/v1/messages/om_q1/reply"
	lk.FailNext(reply, 429, fakelark.CodeRateLimited, 1)
	lk.FailNext(reply, 400, fakelark.CodeChatRateLimit, 0)
	lk.FailNext(reply, 429, fakelark.CodeRateLimited, 1)
	larkText(lk, "om_q1", "oc_1", "first")

	// In oc_3 they meet server errors.
	lk.FailNext("/open-apis/im/v1/messages/om_q3/reply", 500, 1, 0)
	lk.FailNext("/open-apis/im/v1/messages/om_q3/reply", 503, 1, 0)
	larkText(lk, "om_q3", "oc_3", "third")

	close(hold)
	lk.WaitFor(func() bool { return lk.Message(progress.MessageID).Patches > 0 })
	waitCard(t, lk, "oc_1", "reply to **first**")
	waitCard(t, lk, "oc_3", "reply to **third**")
	run.app.router.WaitIdle(t.Context())

	for i, want := range []string{"first", "second", "third"} {
		chat := fmt.Sprintf("oc_%d", i+1)
		if got := larkShowing(lk, chat, "reply to **"+want+"**"); len(got) != 1 || len(lk.Messages(chat)) != 1 {
			t.Errorf("%s: the answer to %q shows in %d cards, want one card in all:%s", chat, want, len(got), dumpLark(lk, chat))
		}
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("the model ran %d times, want 3", n)
	}
	refused := 0
	for _, c := range larkMessageCalls(lk) {
		if c.Code != 0 {
			refused++
		}
	}
	if refused != 8 {
		t.Errorf("%d calls were refused, want the 8 injected", refused)
	}
	checkLarkWaits(t, lk, "om_q1")
	checkLarkWaits(t, lk, "om_q2", progress.MessageID)
	checkLarkWaits(t, lk, "om_q3")
}

// TestFaultLarkRefusalsOutlastRetries: Lark keeps refusing patches, then
// replies, for longer than the bot retries: the answer still arrives once
// in a new card; an undeliverable one is given up and logged; the next
// message is answered.
func TestFaultLarkRefusalsOutlastRetries(t *testing.T) {
	t.Parallel()
	lk, model, logs := fakelark.New(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, larkOn(lk))
	lk.WaitFor(lk.Connected)

	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "Part one. Part **two**.", Chunk: 10, HoldAfter: 2, Hold: hold})
	larkText(lk, "om_a1", "oc_2", "tell me")
	progress := waitCard(t, lk, "oc_2", "Part one.")
	patch := "/open-apis/im/v1/messages/" + progress.MessageID
	lk.FailAlways(patch, 429, fakelark.CodeRateLimited, 1)
	close(hold)
	answer := waitCard(t, lk, "oc_2", "Part one. Part **two**.")
	run.app.router.WaitIdle(t.Context())
	lk.ClearFailures(patch)
	if answer.MessageID == progress.MessageID {
		t.Fatal("a patch went through although Lark refused them all")
	}
	if got := larkShowing(lk, "oc_2", "Part **two**"); len(got) != 1 {
		t.Errorf("the answer shows in %d cards:%s", len(got), dumpLark(lk, "oc_2"))
	}

	before := len(larkMessageCalls(lk))
	reply := "/open-apis/im/v1/messages/om_a2/reply"
	lk.FailAlways(reply, 500, 1, 0)
	larkText(lk, "om_a2", "oc_2", "are you there?")
	model.WaitRequests(2)
	run.app.router.WaitIdle(t.Context())
	lk.ClearFailures(reply)
	if tries := len(larkMessageCalls(lk)) - before; tries < 2 || tries > 6 {
		t.Errorf("the bot made %d refused replies for one answer; want a few retries, then giving up", tries)
	}
	if !logs.warned("oc_2", "injected failure") {
		t.Error("the undeliverable answer was not logged")
	}
	larkText(lk, "om_a3", "oc_2", "hello again")
	waitCard(t, lk, "oc_2", "reply to **hello again**")
	checkLarkWaits(t, lk)
}

// The sentences a person reads when the model fails (llm.UserMessage).
const (
	sayRateLimited = "The model provider is rate-limiting requests; please try again in a moment."
	sayServer      = "The model provider is having trouble right now; please try again in a moment."
	sayAuth        = "The model provider rejected the API key; please check the configured key."
	sayTimeout     = "The model took too long to answer; please try again in a moment."
	sayCut         = "The model's answer was cut off; please try again."
	sayUnreadable  = "The model sent an answer I could not read; please try again."
)

const faultKey = "sk-fault-test-7f3a9c1e"

// modelWithKey is a fake model that accepts only faultKey, and the config
// edit that gives deerflow that key.
func modelWithKey(t *testing.T) (*fakeopenai.Server, func(*config.Config)) {
	model := fakeopenai.New(t)
	model.Key = faultKey
	return model, func(c *config.Config) {
		for i := range c.Models {
			c.Models[i].APIKey = faultKey
		}
	}
}

// checkNoLeaks fails the test if a chat message or the log shows the API
// key or internals (a Go error, a stack trace, a JSON body).
func checkNoLeaks(t *testing.T, shown []string, logs *faultLog) {
	t.Helper()
	for _, text := range shown {
		for _, bad := range []string{faultKey, "goroutine", "panic", "llm:", "status", "{", "http://", "EOF"} {
			if strings.Contains(text, bad) {
				t.Errorf("a message shows %q: %q", bad, text)
			}
		}
	}
	if strings.Contains(logs.String(), faultKey) {
		t.Error("the API key is in the log")
	}
}

func tgShown(tg *faketelegram.Server, chat int64) []string {
	var out []string
	for _, m := range tg.Messages(chat) {
		out = append(out, m.Text)
	}
	return out
}

func larkShown(lk *fakelark.Server, chat string) []string {
	var out []string
	for _, m := range lk.Messages(chat) {
		out = append(out, cardText(m.Content))
	}
	return out
}

// TestFaultModelErrorsThroughTelegram: the model answers 429 with
// Retry-After, a burst of 5xx, 5xx for longer than the retries, and a 401
// that echoes the key. The person sees the answer after the retries, or
// exactly one sentence saying what went wrong; never the key or a Go
// error; and the conversation goes on.
func TestFaultModelErrorsThroughTelegram(t *testing.T) {
	t.Parallel()
	tg, logs := newTelegram(t), &faultLog{}
	model, withKey := modelWithKey(t)
	run := startLogged(t, model, t.TempDir(), logs, telegramOn(tg), withKey)

	model.Script(fakeopenai.Turn{Status: 429, RetryAfter: "1"}, fakeopenai.Turn{Text: "answer **one**"})
	tg.PushMessage(faketelegram.Private(ann, "q1"))
	waitAnswer(t, tg, ann.ID, "answer one")
	reqs := model.Requests()
	if len(reqs) != 2 || reqs[1].Time.Sub(reqs[0].Time) < time.Second {
		t.Errorf("the retry came %v after the 429 that asked for 1s (%d requests)", reqs[len(reqs)-1].Time.Sub(reqs[0].Time), len(reqs))
	}

	model.Script(
		fakeopenai.Turn{Status: 500},
		fakeopenai.Turn{Status: 503, Body: "<html><body>503 Service Unavailable</body></html>"},
		fakeopenai.Turn{Text: "answer **two**"},
	)
	run.app.router.WaitIdle(t.Context()) // the previous turn has ended
	tg.PushMessage(faketelegram.Private(ann, "q2"))
	waitAnswer(t, tg, ann.ID, "answer two")

	model.Script(fakeopenai.Turn{Status: 502}, fakeopenai.Turn{Status: 502}, fakeopenai.Turn{Status: 502})
	run.app.router.WaitIdle(t.Context()) // the previous turn has ended
	tg.PushMessage(faketelegram.Private(ann, "q3"))
	waitMessage(t, tg, ann.ID, sayServer)

	model.Script(fakeopenai.Turn{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + faultKey +
		`","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`})
	run.app.router.WaitIdle(t.Context()) // the previous turn has ended
	tg.PushMessage(faketelegram.Private(ann, "q4"))
	waitMessage(t, tg, ann.ID, sayAuth)

	model.Script(fakeopenai.Turn{Status: 429, RetryAfter: "1"}, fakeopenai.Turn{Status: 429, RetryAfter: "1"}, fakeopenai.Turn{Status: 429, RetryAfter: "1"})
	run.app.router.WaitIdle(t.Context()) // the previous turn has ended
	tg.PushMessage(faketelegram.Private(ann, "q5"))
	waitMessage(t, tg, ann.ID, sayRateLimited)

	model.Script(fakeopenai.Turn{Text: "answer **six**"})
	run.app.router.WaitIdle(t.Context()) // the previous turn has ended
	tg.PushMessage(faketelegram.Private(ann, "q6"))
	waitAnswer(t, tg, ann.ID, "answer six")
	run.app.router.WaitIdle(t.Context())

	var texts []string
	for _, m := range tg.Messages(ann.ID) {
		texts = append(texts, m.PlainText)
	}
	want := []string{"answer one", "answer two", sayServer, sayAuth, sayRateLimited, "answer six"}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("the chat shows:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	// After the refused key the conversation still has its history.
	if got := model.Requests()[len(model.Requests())-1].Roles(); !strings.HasPrefix(got, "system,user,assistant,user,assistant") {
		t.Errorf("the last turn saw %s", got)
	}
	checkNoLeaks(t, tgShown(tg, ann.ID), logs)
}

// TestFaultModelTimeout: a model that never answers within
// models[].timeout_seconds, and one that stalls mid-answer. The person is
// told so in one sentence, and the next message is answered.
func TestFaultModelTimeout(t *testing.T) {
	t.Parallel()
	tg, logs := newTelegram(t), &faultLog{}
	model, withKey := modelWithKey(t)
	run := startLogged(t, model, t.TempDir(), logs, telegramOn(tg), withKey, func(c *config.Config) {
		c.Models[0].TimeoutSeconds = 1
	})
	never := make(chan struct{}) // the fake lets go when the test ends

	model.Script(fakeopenai.Turn{Text: "too late", Hold: never})
	tg.PushMessage(faketelegram.Private(ann, "slow one"))
	waitMessage(t, tg, ann.ID, sayTimeout)
	model.WaitCancelled(1)

	model.Script(fakeopenai.Turn{Text: "I was saying that", Chunk: 6, HoldAfter: 2, Hold: never})
	run.app.router.WaitIdle(t.Context()) // the previous turn has ended
	tg.PushMessage(faketelegram.Private(ann, "stalls midway"))
	// What had arrived stays, followed by the sentence, in the one message.
	waitMessage(t, tg, ann.ID, "I was")
	tg.WaitFor(func() bool { return len(tgAnswers(tg, ann.ID, sayTimeout)) == 2 })
	if got := tgAnswers(tg, ann.ID, sayTimeout); len(got) != 2 || got[1].PlainText != "I was\n\n"+sayTimeout {
		t.Errorf("after a stall the chat shows:%s", dump(tg.Messages(ann.ID)))
	}

	model.Script(fakeopenai.Turn{Text: "on **time**"})
	run.app.router.WaitIdle(t.Context()) // the previous turn has ended
	tg.PushMessage(faketelegram.Private(ann, "quick one"))
	waitAnswer(t, tg, ann.ID, "on time")
	run.app.router.WaitIdle(t.Context())
	checkNoLeaks(t, tgShown(tg, ann.ID), logs)
}

// TestFaultModelStreamsCut, through Lark: the model's stream is cut
// mid-event (the connection drops), ends without finish_reason and
// [DONE], is cut every time, sends an event that is not JSON, and calls a
// tool with malformed JSON arguments. The person sees the answer once
// after a retry (no half-answer left before it), or one sentence; the
// conversation goes on.
func TestFaultModelStreamsCut(t *testing.T) {
	t.Parallel()
	lk, logs := fakelark.New(t), &faultLog{}
	model, withKey := modelWithKey(t)
	dir := t.TempDir()
	run := startLogged(t, model, dir, logs, larkOn(lk), withKey)
	lk.WaitFor(lk.Connected)
	n := 0
	ask := func(text string) {
		run.app.router.WaitIdle(t.Context()) // the previous turn has ended
		n++
		larkText(lk, fmt.Sprintf("om_m%d", n), "oc_m", text)
	}
	// final waits for the n-th card to show want, and returns what it shows.
	final := func(want string) string {
		t.Helper()
		var got string
		lk.WaitFor(func() bool {
			msgs := lk.Messages("oc_m")
			if len(msgs) < n {
				return false
			}
			got = cardText(msgs[n-1].Content)
			return strings.Contains(got, want)
		})
		if !strings.Contains(got, want) {
			t.Fatalf("card %d shows %q, want %q:%s", n, got, want, dumpLark(lk, "oc_m"))
		}
		return got
	}

	model.Script(
		fakeopenai.Turn{Text: "Hello there, friend.", Chunk: 5, CutAfter: 3, Abort: true},
		fakeopenai.Turn{Text: "Hello there, **friend**."},
	)
	ask("greet me")
	if got := final("**friend**"); got != "Hello there, **friend**." {
		t.Errorf("after a dropped stream the answer reads %q", got)
	}

	model.Script(
		fakeopenai.Turn{Text: "Second try without an end", Chunk: 6, CutAfter: 3},
		fakeopenai.Turn{Text: "Second **answer**"},
	)
	ask("again")
	if got := final("Second **answer**"); got != "Second **answer**" {
		t.Errorf("after a stream without [DONE] the answer reads %q", got)
	}

	for range 3 {
		model.Script(fakeopenai.Turn{Text: "cut cut cut", Chunk: 4, CutAfter: 2})
	}
	ask("keeps breaking")
	if got := final(sayCut); strings.Count(got, sayCut) != 1 || !strings.HasSuffix(got, sayCut) {
		t.Errorf("a stream cut every time ends as %q", got)
	}

	// An event that is not JSON (a garbling proxy): sent as a 200 body.
	model.Script(fakeopenai.Turn{Status: 200, Body: "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"oops\n\n"})
	ask("garbled")
	if got := final(sayUnreadable); got != sayUnreadable {
		t.Errorf("a garbled stream ends as %q", got)
	}

	model.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file",
			Arguments: `{"path": "/mnt/user-data/outputs/notes.txt", "content": "unterminated`}}},
		fakeopenai.Turn{Text: "Sorry, I could **not** write it."},
	)
	ask("write a note")
	final("Sorry, I could **not** write it.")
	reqs := model.Requests()
	if res := reqs[len(reqs)-1].Last(); res.Role != "tool" || !strings.Contains(strings.ToLower(res.Content), "json") {
		t.Errorf("the model was told %s %q about its malformed arguments", res.Role, res.Content)
	}

	model.Script(fakeopenai.Turn{Text: "Still **here**."})
	ask("still there?")
	final("Still **here**.")
	run.app.router.WaitIdle(t.Context())

	if got := len(lk.Messages("oc_m")); got != n {
		t.Errorf("%d cards, want one per question:%s", got, dumpLark(lk, "oc_m"))
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "notes.txt" {
			t.Errorf("a tool ran with malformed arguments: %s exists", p)
		}
		return nil
	})
	checkNoLeaks(t, larkShown(lk, "oc_m"), logs)
}

// TestFaultSlackSocketDrops: the Socket Mode connection is cut while an
// answer streams, and later refreshed with a disconnect frame. The bot
// reconnects; messages sent meanwhile are answered once; an event Slack
// redelivers after the drop (same event_id, new envelope) is not answered
// twice; the answers being streamed still arrive.
func TestFaultSlackSocketDrops(t *testing.T) {
	t.Parallel()
	sl, model, logs := newSlack(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, slackOn(sl))
	// Each message in a DM of its own: Slack's one-post-a-second per
	// channel would otherwise make the test slow.

	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "a long **answer** to first", Chunk: 7, HoldAfter: 2, Hold: hold})
	first := sl.SendEvent(map[string]any{"type": "message", "channel_type": "im", "channel": "D1", "user": "U1",
		"text": "first", "ts": "1700000100.000100", "event_ts": "1700000100.000100"})
	waitPosted(t, sl, "D1", "a long", false)

	sl.DropSocket()
	again := sl.Retry(first) // Slack did not see the ack in time: the same event again
	sl.Message("D2", "im", "U1", "second", "")
	sl.WaitFor(func() bool { return sl.Connections() >= 2 })
	waitPosted(t, sl, "D2", "reply to **second**", true)
	sl.WaitFor(func() bool { return sl.Acked(again) }) // handled (and dropped) before the answer is done
	close(hold)
	waitPosted(t, sl, "D1", "a long **answer** to first", true)

	hold2 := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "streaming **third**", Chunk: 6, HoldAfter: 2, Hold: hold2})
	sl.Message("D3", "im", "U1", "third", "")
	waitPosted(t, sl, "D3", "stream", false)
	sl.Disconnect("refresh_requested")
	sl.Message("D4", "im", "U1", "fourth", "")
	waitPosted(t, sl, "D4", "reply to **fourth**", true)
	close(hold2)
	waitPosted(t, sl, "D3", "streaming **third**", true)
	run.app.router.WaitIdle(t.Context())

	count := map[string]int{}
	for _, r := range model.Requests() {
		count[r.Last().Content]++
	}
	if count["first"] != 1 || count["second"] != 1 || count["third"] != 1 || count["fourth"] != 1 || len(count) != 4 {
		t.Errorf("model runs per message = %v, want each once", count)
	}
	for i, want := range []string{"a long **answer** to first", "reply to **second**", "streaming **third**", "reply to **fourth**"} {
		ch := fmt.Sprintf("D%d", i+1)
		if got := slackShowing(sl, ch, want); len(got) != 1 || len(sl.Messages(ch)) != 1 {
			t.Errorf("%s: %q shows in %d messages, want one message in all:%s", ch, want, len(got), dumpSlack(sl, ch))
		}
	}
	if sl.Connections() < 3 {
		t.Errorf("%d connections, want a reconnect after the drop and after the refresh", sl.Connections())
	}
}

// TestFaultLarkConnectionDrops: the long connection is cut while an answer
// streams. The bot reconnects; Lark's re-push of an event (same event_id)
// is acknowledged and not answered twice; a message sent during the drop
// is answered; the answer being streamed still arrives.
func TestFaultLarkConnectionDrops(t *testing.T) {
	t.Parallel()
	lk, model, logs := fakelark.New(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, larkOn(lk))
	lk.WaitFor(lk.Connected)

	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "a long **answer** to first", Chunk: 7, HoldAfter: 2, Hold: hold})
	first := larkText(lk, "om_d1", "oc_d", "first")
	waitCard(t, lk, "oc_d", "a long")

	lk.DropConnection()
	lk.Redeliver(first)
	second := larkText(lk, "om_d2", "oc_d", "second")
	lk.WaitFor(func() bool { return lk.Connections() >= 2 && lk.Connected() })
	// One chat is one conversation: the second waits for the first.
	waitCard(t, lk, "oc_d", "(1 waiting)")
	close(hold)
	waitCard(t, lk, "oc_d", "a long **answer** to first")
	waitCard(t, lk, "oc_d", "reply to **second**")
	lk.WaitFor(func() bool { acks := lk.EventAcks(first); return len(acks) >= 2 && acks[len(acks)-1] != 0 })
	run.app.router.WaitIdle(t.Context())

	if acks := lk.EventAcks(first); len(acks) < 2 || acks[len(acks)-1] != 200 {
		t.Errorf("the re-pushed event was acknowledged %v, want 200 (else Lark pushes it again)", acks)
	}
	if acks := lk.EventAcks(second); len(acks) == 0 || acks[len(acks)-1] != 200 {
		t.Errorf("the message sent during the drop was acknowledged %v", acks)
	}
	count := map[string]int{}
	for _, r := range model.Requests() {
		count[r.Last().Content]++
	}
	if count["first"] != 1 || count["second"] != 1 || len(count) != 2 {
		t.Errorf("model runs per message = %v, want each once", count)
	}
	for _, want := range []string{"a long **answer** to first", "reply to **second**"} {
		if got := larkShowing(lk, "oc_d", want); len(got) != 1 {
			t.Errorf("%q shows in %d cards:%s", want, len(got), dumpLark(lk, "oc_d"))
		}
	}
	if n := len(lk.Messages("oc_d")); n != 3 {
		t.Errorf("%d cards, want the 2 answers and the note that the second waits:%s", n, dumpLark(lk, "oc_d"))
	}
}

// TestFaultSlackManyChatsRateLimited: twenty DMs at once, the first twenty
// posts refused with 429: every one is answered exactly once, each
// channel waiting out its Retry-After.
func TestFaultSlackManyChatsRateLimited(t *testing.T) {
	t.Parallel()
	sl, model, logs := newSlack(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, slackOn(sl))
	const n = 20
	for range n {
		sl.FailNext("chat.postMessage", 429, 1, "")
	}
	for i := range n {
		sl.Message(fmt.Sprintf("D%d", 100+i), "im", fmt.Sprintf("U%d", 100+i), fmt.Sprintf("question %d", i), "")
	}
	for i := range n {
		waitPosted(t, sl, fmt.Sprintf("D%d", 100+i), fmt.Sprintf("reply to **question %d**", i), true)
	}
	run.app.router.WaitIdle(t.Context())
	refused := 0
	for i := range n {
		ch := fmt.Sprintf("D%d", 100+i)
		if msgs := sl.Messages(ch); len(msgs) != 1 {
			t.Errorf("%s has %d messages, want its one answer:%s", ch, len(msgs), dumpSlack(sl, ch))
		}
		for _, c := range slackCallsTo(sl, ch) {
			if c.Status == 429 {
				refused++
			}
		}
		checkSlackWaits(t, sl, ch, time.Second)
	}
	if refused != n {
		t.Errorf("%d posts were refused, want the %d injected", refused, n)
	}
	if got := len(model.Requests()); got != n {
		t.Errorf("the model ran %d times, want %d", got, n)
	}
}

// TestFaultLarkManyChatsRateLimited: twenty chats at once, each one's first
// reply refused with 99991400: every one is answered exactly once, each
// waiting out the reset.
func TestFaultLarkManyChatsRateLimited(t *testing.T) {
	t.Parallel()
	lk, model, logs := fakelark.New(t), echoModel(t), &faultLog{}
	run := startLogged(t, model, t.TempDir(), logs, larkOn(lk))
	lk.WaitFor(lk.Connected)
	const n = 20
	for i := range n {
		lk.FailNext(fmt.Sprintf("/open-apis/im/v1/messages/om_r%d/reply", i), 429, fakelark.CodeRateLimited, 1)
	}
	for i := range n {
		lk.Send(fakelark.MessageEvent{MessageID: fmt.Sprintf("om_r%d", i), ChatID: fmt.Sprintf("oc_r%d", i), ChatType: "p2p",
			SenderOpenID: fmt.Sprintf("ou_%d", i), Content: fakelark.Text(fmt.Sprintf("question %d", i))})
	}
	for i := range n {
		waitCard(t, lk, fmt.Sprintf("oc_r%d", i), fmt.Sprintf("reply to **question %d**", i))
	}
	run.app.router.WaitIdle(t.Context())
	for i := range n {
		chat := fmt.Sprintf("oc_r%d", i)
		if msgs := lk.Messages(chat); len(msgs) != 1 {
			t.Errorf("%s has %d cards, want its one answer:%s", chat, len(msgs), dumpLark(lk, chat))
		}
	}
	// Each chat's reply waited out its reset (the calls of one chat are
	// told apart by the question they reply to, or the card they patch).
	limited := map[string]time.Time{}
	card := map[string]string{} // card id -> question
	for i := range n {
		if msgs := lk.Messages(fmt.Sprintf("oc_r%d", i)); len(msgs) == 1 {
			card[msgs[0].MessageID] = fmt.Sprintf("om_r%d", i)
		}
	}
	for _, c := range larkMessageCalls(lk) {
		q := strings.TrimSuffix(strings.TrimPrefix(c.Path, "/open-apis/im/v1/messages/"), "/reply")
		if cq, ok := card[q]; ok {
			q = cq
		}
		if c.Time.Before(limited[q].Add(time.Second)) {
			t.Errorf("%s %s went out %v after its chat was rate limited", c.Method, c.Path, c.Time.Sub(limited[q]))
		}
		if c.Code == fakelark.CodeRateLimited {
			limited[q] = c.Time
		}
	}
	if len(limited) != n {
		t.Errorf("%d chats were rate limited, want %d", len(limited), n)
	}
	if got := len(model.Requests()); got != n {
		t.Errorf("the model ran %d times, want %d", got, n)
	}
}
