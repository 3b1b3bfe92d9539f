package fakeslack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

func slackErr(err error) string {
	var e slack.SlackErrorResponse
	if errors.As(err, &e) {
		return e.Err
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestChatAndReactions(t *testing.T) {
	s := New(t)
	c := newClient(t, s, true)
	c.waitHello()
	ctx := context.Background()
	api := c.api

	if at, err := api.AuthTestContext(ctx); err != nil || at.UserID != "U0BOT" || at.BotID != "B0BOT" || at.TeamID != "T0TEAM" {
		t.Fatalf("auth.test = %+v, %v", at, err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C9", slack.MsgOptionText("x", false)); slackErr(err) != "channel_not_found" {
		t.Fatalf("unknown channel: %v", err)
	}
	userTS := s.Mention("C1", "U1", "<@U0BOT> hi", "")
	c.nextUser()
	c.nextUser()
	if _, _, err := api.PostMessageContext(ctx, "C1"); slackErr(err) != "no_text" {
		t.Fatalf("no text: %v", err)
	}
	ch, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("thinking…", false),
		slack.MsgOptionTS(userTS), slack.MsgOptionDisableLinkUnfurl())
	if err != nil || ch != "C1" || ts <= userTS {
		t.Fatalf("postMessage = %s %s %v", ch, ts, err)
	}
	// The bot's own post comes back as a message event with bot_id.
	echo := (<-c.events).Data.(slackevents.EventsAPIEvent).InnerEvent.Data.(*slackevents.MessageEvent)
	if echo.BotID != "B0BOT" || echo.User != "U0BOT" || echo.TimeStamp != ts || echo.ThreadTimeStamp != userTS {
		t.Fatalf("echo = %#v", echo)
	}
	blocks := slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "*done*", false, false), nil, nil))
	for range 2 { // identical content is accepted
		if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("done", false), blocks); err != nil {
			t.Fatal(err)
		}
	}
	long := slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", strings.Repeat("a", 3001), false, false), nil, nil))
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, long); slackErr(err) != "invalid_blocks" {
		t.Fatalf("long section: %v", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1.000001", slack.MsgOptionText("x", false)); slackErr(err) != "message_not_found" {
		t.Fatalf("update unknown: %v", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", userTS, slack.MsgOptionText("x", false)); slackErr(err) != "cant_update_message" {
		t.Fatalf("update user's: %v", err)
	}
	msgs := s.Messages("C1")
	if len(msgs) != 1 || msgs[0].Text != "done" || msgs[0].Updates != 2 || msgs[0].ThreadTS != userTS || !strings.Contains(string(msgs[0].Blocks), "*done*") {
		t.Fatalf("messages = %+v", msgs)
	}
	if fs := s.CallsTo("chat.postMessage"); fs[len(fs)-1].Form["unfurl_links"] != "false" {
		t.Fatalf("form = %v", fs[len(fs)-1].Form)
	}

	ref := slack.ItemRef{Channel: "C1", Timestamp: userTS}
	if err := api.AddReactionContext(ctx, "eyes", ref); err != nil {
		t.Fatal(err)
	}
	if err := api.AddReactionContext(ctx, "eyes", ref); slackErr(err) != "already_reacted" {
		t.Fatalf("twice: %v", err)
	}
	if err := api.AddReactionContext(ctx, "white_check_mark", ref); err != nil {
		t.Fatal(err)
	}
	if err := api.RemoveReactionContext(ctx, "eyes", ref); err != nil {
		t.Fatal(err)
	}
	if err := api.RemoveReactionContext(ctx, "eyes", ref); slackErr(err) != "no_reaction" {
		t.Fatalf("remove twice: %v", err)
	}
	if r := s.Reactions("C1", userTS); len(r) != 1 || r[0] != "white_check_mark" {
		t.Fatalf("reactions = %v", r)
	}

	if err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
		ChannelID: "C1", ThreadTS: userTS, Status: "is thinking…"}); err != nil || s.Status("C1", userTS) != "is thinking…" {
		t.Fatalf("setStatus: %v", err)
	}
	if _, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionText("only you", false)); err != nil {
		t.Fatal(err)
	}
	if m := s.Messages("C1"); len(m) != 2 || !m[1].Ephemeral || m[1].User != "U1" {
		t.Fatalf("ephemeral = %+v", m[1])
	}
	s.WaitFor(func() bool { return len(s.CallsTo("chat.postEphemeral")) == 1 })
}

func TestTruncationAndMarkdownLimit(t *testing.T) {
	s := New(t)
	s.AddChannel("C1", "")
	api := slack.New(s.BotToken, slack.OptionAPIURL(s.URL+"/api/"))
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText(strings.Repeat("x", 40001), false))
	if err != nil || len(s.Messages("C1")[0].Text) != 40000 {
		t.Fatalf("truncation: %s %v", ts, err)
	}
	md := func(n int) slack.Block { return slack.NewMarkdownBlock("", strings.Repeat("m", n)) }
	if _, _, err := api.PostMessage("C1", slack.MsgOptionBlocks(md(6000), md(6001))); slackErr(err) != "invalid_blocks" {
		t.Fatalf("markdown cumulative: %v", err)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionBlocks(md(6000), md(6000))); err != nil {
		t.Fatal(err)
	}
	many := make([]slack.Block, 51)
	for i := range many {
		many[i] = slack.NewDividerBlock()
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionBlocks(many...)); slackErr(err) != "invalid_blocks" {
		t.Fatalf("51 blocks: %v", err)
	}
}

func TestUploadV2LandsInThread(t *testing.T) {
	s := New(t)
	s.EchoBotMessages = false
	s.AddChannel("C1", "channel")
	api := slack.New(s.BotToken, slack.OptionAPIURL(s.URL+"/api/"))
	data := "hello report"
	f, err := api.UploadFileContext(context.Background(), slack.UploadFileParameters{
		Filename: "report.txt", FileSize: len(data), Reader: strings.NewReader(data),
		Channel: "C1", ThreadTimestamp: "1700000000.000100", Title: "Report", InitialComment: "here",
	})
	if err != nil || f.Title != "Report" {
		t.Fatalf("upload = %+v, %v", f, err)
	}
	m := s.Messages("C1")
	if len(m) != 1 || m[0].ThreadTS != "1700000000.000100" || m[0].Text != "here" || len(m[0].Files) != 1 ||
		string(m[0].Files[0].Data) != data || m[0].Files[0].Name != "report.txt" || m[0].Files[0].ID != f.ID {
		t.Fatalf("messages = %+v", m)
	}
	// Completing without uploading fails.
	u, err := api.GetUploadURLExternalContext(context.Background(), slack.GetUploadURLExternalParameters{FileName: "a.txt", FileSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = api.CompleteUploadExternalContext(context.Background(), slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u.FileID}}, Channel: "C1"})
	if slackErr(err) != "file_not_found" {
		t.Fatalf("complete without upload: %v", err)
	}
}

func TestRateLimitAndFailures(t *testing.T) {
	s := New(t)
	s.AddChannel("C1", "")
	api := slack.New(s.BotToken, slack.OptionAPIURL(s.URL+"/api/"))
	s.FailNext("chat.postMessage", 429, 3, "")
	_, _, err := api.PostMessage("C1", slack.MsgOptionText("x", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 3*time.Second {
		t.Fatalf("err = %#v", err)
	}
	s.FailNext("chat.postMessage", 0, 0, "msg_too_long")
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("x", false)); slackErr(err) != "msg_too_long" {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("x", false)); err != nil {
		t.Fatal(err)
	}
	calls := s.CallsTo("chat.postMessage")
	if len(calls) != 3 || calls[0].Status != 429 || calls[1].Error != "msg_too_long" || calls[2].Error != "" {
		t.Fatalf("calls = %+v", calls)
	}
	for i, c := range calls { // answer times, for checking that Retry-After was waited out
		if c.Time.IsZero() || (i > 0 && c.Time.Before(calls[i-1].Time)) {
			t.Errorf("call %d answered at %v", i, c.Time)
		}
	}
	// A Slack that keeps failing until told to stop; queued failures first.
	s.FailNext("chat.update", 0, 0, "msg_too_long")
	s.FailAlways("chat.update", 503, 0, "")
	if _, _, _, err := api.UpdateMessage("C1", "1.2", slack.MsgOptionText("y", false)); slackErr(err) != "msg_too_long" {
		t.Fatalf("queued failure: %v", err)
	}
	for range 2 {
		var sc slack.StatusCodeError
		if _, _, _, err := api.UpdateMessage("C1", "1.2", slack.MsgOptionText("y", false)); !errors.As(err, &sc) || sc.Code != 503 {
			t.Fatalf("failing always: %#v", err)
		}
	}
	s.FailNext("chat.update", 429, 1, "")
	if n := s.ClearFailures("chat.update"); n != 1 {
		t.Errorf("ClearFailures left %d unused, want 1", n)
	}
	if _, _, _, err := api.UpdateMessage("C1", s.Messages("C1")[0].TS, slack.MsgOptionText("y", false)); err != nil {
		t.Fatalf("after ClearFailures: %v", err)
	}
	if _, err := slack.New("xoxb-wrong", slack.OptionAPIURL(s.URL+"/api/")).AuthTest(); slackErr(err) != "invalid_auth" {
		t.Fatalf("wrong token: %v", err)
	}
	// Raw form post: unknown method, JSON content type.
	resp, err := http.PostForm(s.URL+"/api/no.such", url.Values{"token": {s.BotToken}})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	_ = resp.Body.Close()
	if resp.Header.Get("Content-Type") != "application/json; charset=utf-8" || body["error"] != "unknown_method" {
		t.Fatalf("unknown method: %v %v", resp.Header, body)
	}
}

func TestSharedFileDownload(t *testing.T) {
	s := New(t)
	c := newClient(t, s, true)
	c.waitHello()
	f := s.AddFile("F1", "notes.txt", []byte("secret"))
	s.ShareFile("D1", "im", "U1", "see file", "", f)
	_, a := c.nextUser()
	m := a.InnerEvent.Data.(*slackevents.MessageEvent)
	if m.SubType != "file_share" || m.Message == nil || len(m.Message.Files) != 1 || m.Message.Files[0].URLPrivate != f.URLPrivate {
		t.Fatalf("file_share = %#v", m)
	}
	get := func(auth string) (string, string) {
		req, _ := http.NewRequest("GET", f.URLPrivate, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Content-Type"), string(b)
	}
	if ct, body := get("Bearer " + s.BotToken); body != "secret" || !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("download = %s %q", ct, body)
	}
	if ct, _ := get(""); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("unauthenticated download content type %s", ct)
	}
	var buf strings.Builder
	if err := c.api.GetFile(f.URLPrivateDownload, &buf); err != nil || buf.String() != "secret" {
		t.Fatalf("GetFile = %q %v", buf.String(), err)
	}
}
