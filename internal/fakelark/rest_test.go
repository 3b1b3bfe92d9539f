package fakelark_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	lark "github.com/larksuite/oapi-sdk-go/v3"
	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/deerflow/deerflow/internal/fakelark"
)

var ctx = context.Background()

func create(t *testing.T, cli *lark.Client, idType, id, msgType, content, uuid string) *larkim.CreateMessageResp {
	t.Helper()
	b := larkim.NewCreateMessageReqBodyBuilder().ReceiveId(id).MsgType(msgType).Content(content)
	if uuid != "" {
		b.Uuid(uuid)
	}
	resp, err := cli.Im.V1.Message.Create(ctx, larkim.NewCreateMessageReqBuilder().ReceiveIdType(idType).Body(b.Build()).Build())
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func card(text string, multi bool) string {
	b, _ := json.Marshal(map[string]any{"schema": "2.0", "config": map[string]any{"update_multi": multi},
		"body": map[string]any{"elements": []any{map[string]any{"tag": "markdown", "content": text}}}})
	return string(b)
}

func TestTokenReusedAndBotInfo(t *testing.T) {
	f := fakelark.New(t)
	cli := restClient(f)
	for i := 0; i < 2; i++ {
		resp, err := cli.Get(ctx, "/open-apis/bot/v3/info", nil, larkcore.AccessTokenTypeTenant)
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			Code int `json:"code"`
			Bot  struct {
				OpenID string `json:"open_id"`
			} `json:"bot"`
		}
		if err := json.Unmarshal(resp.RawBody, &info); err != nil || info.Code != 0 || info.Bot.OpenID != "ou_bot" {
			t.Fatalf("bot info %s (%v)", resp.RawBody, err)
		}
	}
	if f.Tokens() != 1 {
		t.Fatalf("tokens fetched %d, calls %+v", f.Tokens(), f.Calls())
	}
	// Without a token this server issued: 99991663.
	res, err := http.Get(f.URL + "/open-apis/bot/v3/info")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "99991663") || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("unauthenticated: %s %s", res.Header.Get("Content-Type"), body)
	}
	// After invalidation the SDK v3.12.0 retries once with its cached token
	// (it does not refetch), so the caller sees 99991663.
	f.InvalidateTokens()
	n := len(f.Calls())
	resp, err := cli.Get(ctx, "/open-apis/bot/v3/info", nil, larkcore.AccessTokenTypeTenant)
	if err != nil || !strings.Contains(string(resp.RawBody), "99991663") || len(f.Calls()) != n+2 || f.Tokens() != 1 {
		t.Fatalf("invalidated: %v %s, calls %+v", err, resp.RawBody, f.Calls()[n:])
	}
}

func TestCreateValidationAndDedupe(t *testing.T) {
	f := fakelark.New(t)
	cli := restClient(f)
	f.Send(fakelark.MessageEvent{ChatID: "oc_g", ChatType: "group", SenderOpenID: "ou_alice", Content: fakelark.Text("x")})
	r := create(t, cli, "chat_id", "oc_g", "text", fakelark.Text("hello"), "u-1")
	if !r.Success() || !strings.HasPrefix(*r.Data.MessageId, "om_bot_") || *r.Data.ChatId != "oc_g" || *r.Data.Sender.SenderType != "app" {
		t.Fatalf("create: %s", larkcore.Prettify(r))
	}
	if again := create(t, cli, "chat_id", "oc_g", "text", fakelark.Text("hello"), "u-1"); *again.Data.MessageId != *r.Data.MessageId {
		t.Fatal("uuid not deduped")
	}
	if p := create(t, cli, "open_id", "ou_alice", "post", `{"zh_cn":{"title":"","content":[[{"tag":"md","text":"**x**"}]]}}`, ""); !p.Success() {
		t.Fatalf("open_id: %d %s", p.Code, p.Msg)
	}
	for _, c := range []struct {
		idType, id, typ, content string
		code                     int
	}{
		{"chat_id", "oc_nope", "text", fakelark.Text("x"), 230002},
		{"open_id", "ou_nobody", "text", fakelark.Text("x"), 230013},
		{"chat_id", "oc_g", "text", `{"text":`, 230001},
		{"chat_id", "oc_g", "sticker", `{}`, 230001},
		{"chat_id", "oc_g", "interactive", `[1]`, 230001},
		{"chat_id", "oc_g", "interactive", card(strings.Repeat("a", 31<<10), true), 230025},
		{"chat_id", "oc_g", "text", fakelark.Text(strings.Repeat("a", 151<<10)), 230025},
	} {
		if r := create(t, cli, c.idType, c.id, c.typ, c.content, ""); r.Code != c.code {
			t.Errorf("%s %s: code %d %s, want %d", c.id, c.typ, r.Code, r.Msg, c.code)
		}
	}
	if n := len(f.Messages("oc_g")); n != 1 {
		t.Fatalf("oc_g has %d bot messages", n)
	}
}

func TestReplyPatchAndEdit(t *testing.T) {
	f := fakelark.New(t)
	cli := restClient(f)
	f.Send(fakelark.MessageEvent{ChatID: "oc_g", SenderOpenID: "ou_a", MessageID: "om_q", Content: fakelark.Text("q")})
	reply := func(parent, typ, content string) *larkim.ReplyMessageResp {
		r, err := cli.Im.V1.Message.Reply(ctx, larkim.NewReplyMessageReqBuilder().MessageId(parent).Body(
			larkim.NewReplyMessageReqBodyBuilder().MsgType(typ).Content(content).ReplyInThread(true).Build()).Build())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := reply("om_q", "interactive", card("thinking", true))
	if !r.Success() || *r.Data.ParentId != "om_q" || *r.Data.RootId != "om_q" || *r.Data.ThreadId == "" {
		t.Fatalf("reply: %s", larkcore.Prettify(r))
	}
	id := *r.Data.MessageId
	patch := func(id, content string) *larkim.PatchMessageResp {
		p, err := cli.Im.V1.Message.Patch(ctx, larkim.NewPatchMessageReqBuilder().MessageId(id).Body(
			larkim.NewPatchMessageReqBodyBuilder().Content(content).Build()).Build())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := patch(id, card("done", true)); !p.Success() {
		t.Fatalf("patch: %d %s", p.Code, p.Msg)
	}
	if p := patch(id, card("no multi", false)); p.Code != 230001 {
		t.Fatalf("patch without update_multi: %d", p.Code)
	}
	if p := patch("om_q", card("x", true)); p.Code != 230001 {
		t.Fatalf("patch of a user message: %d", p.Code)
	}
	if r := reply("om_missing", "text", fakelark.Text("x")); r.Code != 230011 {
		t.Fatalf("reply to unknown: %d", r.Code)
	}
	msgs := f.Messages("oc_g")
	if len(msgs) != 1 || msgs[0].Patches != 1 || msgs[0].Content != card("done", true) || msgs[0].ReplyTo != "om_q" || len(msgs[0].History) != 2 {
		t.Fatalf("messages: %+v", msgs)
	}
	// PUT edits: text/post only, at most 20.
	txt := *reply("om_q", "text", fakelark.Text("v0")).Data.MessageId
	for i := 1; i <= 21; i++ {
		u, err := cli.Im.V1.Message.Update(ctx, larkim.NewUpdateMessageReqBuilder().MessageId(txt).Body(
			larkim.NewUpdateMessageReqBodyBuilder().MsgType("text").Content(fakelark.Text("v")).Build()).Build())
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 0, false: 230072}[i <= 20]; u.Code != want {
			t.Fatalf("edit %d: code %d want %d", i, u.Code, want)
		}
	}
	if m := f.Message(txt); m.Updates != 20 || m.ThreadID != msgs[0].ThreadID {
		t.Fatalf("edited message %+v", m)
	}
}

func TestReactions(t *testing.T) {
	f := fakelark.New(t)
	cli := restClient(f)
	f.Send(fakelark.MessageEvent{ChatID: "oc_g", SenderOpenID: "ou_a", MessageID: "om_q", Content: fakelark.Text("q")})
	r, err := cli.Im.V1.MessageReaction.Create(ctx, larkim.NewCreateMessageReactionReqBuilder().MessageId("om_q").Body(
		larkim.NewCreateMessageReactionReqBodyBuilder().ReactionType(larkim.NewEmojiBuilder().EmojiType("THUMBSUP").Build()).Build()).Build())
	if err != nil || !r.Success() || *r.Data.ReactionType.EmojiType != "THUMBSUP" {
		t.Fatalf("react: %v %s", err, larkcore.Prettify(r))
	}
	if got := f.Reactions("om_q"); len(got) != 1 || got[0] != "THUMBSUP" {
		t.Fatalf("reactions %v", got)
	}
	d, err := cli.Im.V1.MessageReaction.Delete(ctx, larkim.NewDeleteMessageReactionReqBuilder().MessageId("om_q").ReactionId(*r.Data.ReactionId).Build())
	if err != nil || !d.Success() || len(f.Reactions("om_q")) != 0 {
		t.Fatalf("delete: %v %+v %v", err, d, f.Reactions("om_q"))
	}
}

func TestUploadsAndResources(t *testing.T) {
	f := fakelark.New(t)
	cli := restClient(f)
	f.Send(fakelark.MessageEvent{ChatID: "oc_g", SenderOpenID: "ou_a", MessageID: "om_f", MessageType: "file", Content: `{"file_key":"fk_in","file_name":"in.txt"}`})
	f.AddResource("om_f", "fk_in", []byte("inbound bytes"))
	img, err := cli.Im.V1.Image.Create(ctx, larkim.NewCreateImageReqBuilder().Body(
		larkim.NewCreateImageReqBodyBuilder().ImageType("message").Image(bytes.NewReader([]byte("PNGDATA"))).Build()).Build())
	if err != nil || !img.Success() {
		t.Fatalf("image: %v %+v", err, img)
	}
	file, err := cli.Im.V1.File.Create(ctx, larkim.NewCreateFileReqBuilder().Body(
		larkim.NewCreateFileReqBodyBuilder().FileType("stream").FileName("out.txt").File(bytes.NewReader([]byte("FILEDATA"))).Build()).Build())
	if err != nil || !file.Success() {
		t.Fatalf("file: %v %+v", err, file)
	}
	create(t, cli, "chat_id", "oc_g", "image", `{"image_key":"`+*img.Data.ImageKey+`"}`, "")
	fm := create(t, cli, "chat_id", "oc_g", "file", `{"file_key":"`+*file.Data.FileKey+`"}`, "")
	msgs := f.Messages("oc_g")
	if len(msgs) != 2 || string(msgs[0].Data) != "PNGDATA" || msgs[0].ImageKey != *img.Data.ImageKey ||
		string(msgs[1].Data) != "FILEDATA" || msgs[1].FileName != "out.txt" {
		t.Fatalf("messages %+v", msgs)
	}
	if r := create(t, cli, "chat_id", "oc_g", "image", `{"image_key":"img_unknown"}`, ""); r.Code != 230001 {
		t.Fatalf("unknown image key: %d", r.Code)
	}
	get := func(mid, key, typ string) *larkim.GetMessageResourceResp {
		r, err := cli.Im.V1.MessageResource.Get(ctx, larkim.NewGetMessageResourceReqBuilder().MessageId(mid).FileKey(key).Type(typ).Build())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := get("om_f", "fk_in", "file"); !r.Success() || r.File == nil {
		t.Fatalf("download: %+v", r)
	} else if b, _ := io.ReadAll(r.File); string(b) != "inbound bytes" {
		t.Fatalf("downloaded %q", b)
	}
	if r := get(*fm.Data.MessageId, *file.Data.FileKey, "file"); r.File == nil || r.FileName != "out.txt" {
		t.Fatalf("download of own file: %+v", r)
	}
	if r := get("om_f", "fk_other", "file"); r.Code != 234003 {
		t.Fatalf("missing resource: %d", r.Code)
	}
}

func TestFailNextRateLimit(t *testing.T) {
	f := fakelark.New(t)
	cli := restClient(f)
	f.AddChat("oc_g")
	f.FailNext("/open-apis/im/v1/messages", http.StatusTooManyRequests, 99991400, 7)
	r := create(t, cli, "chat_id", "oc_g", "text", fakelark.Text("x"), "")
	if r.Code != 99991400 || r.ApiResp.StatusCode != 429 || r.ApiResp.Header.Get("x-ogw-ratelimit-reset") != "7" {
		t.Fatalf("rate limit: %d %d %v", r.Code, r.ApiResp.StatusCode, r.ApiResp.Header)
	}
	if r := create(t, cli, "chat_id", "oc_g", "text", fakelark.Text("x"), ""); !r.Success() {
		t.Fatalf("second call should pass: %d", r.Code)
	}
	calls := f.Calls()
	last := calls[len(calls)-2]
	if last.Status != 429 || last.Code != 99991400 || last.Method != "POST" || !strings.Contains(last.Body, `"receive_id":"oc_g"`) {
		t.Fatalf("calls %+v", calls)
	}
	// Answer times, for checking that a client waited out the reset.
	if next := calls[len(calls)-1]; last.Time.IsZero() || next.Time.Before(last.Time) {
		t.Errorf("answered at %v then %v", last.Time, next.Time)
	}
}

func TestFailAlwaysAndClear(t *testing.T) {
	f := fakelark.New(t)
	cli := restClient(f)
	f.AddChat("oc_g")
	f.FailNext("/open-apis/im/v1/messages", http.StatusBadRequest, fakelark.CodeChatRateLimit, 0)
	f.FailAlways("/open-apis/im/v1/messages", http.StatusInternalServerError, 1, 0)
	if r := create(t, cli, "chat_id", "oc_g", "text", fakelark.Text("x"), ""); r.Code != fakelark.CodeChatRateLimit || r.ApiResp.StatusCode != 400 {
		t.Fatalf("first call: %d %d, want the queued per-chat limit", r.Code, r.ApiResp.StatusCode)
	}
	for range 3 {
		if r := create(t, cli, "chat_id", "oc_g", "text", fakelark.Text("x"), ""); r.Code != 1 || r.ApiResp.StatusCode != 500 {
			t.Fatalf("failing always: %d %d", r.Code, r.ApiResp.StatusCode)
		}
	}
	f.FailNext("/open-apis/im/v1/messages", http.StatusBadRequest, fakelark.CodeSendRateLimit, 0)
	if n := f.ClearFailures("/open-apis/im/v1/messages"); n != 1 {
		t.Errorf("ClearFailures left %d unused, want 1", n)
	}
	if r := create(t, cli, "chat_id", "oc_g", "text", fakelark.Text("x"), ""); !r.Success() {
		t.Fatalf("after ClearFailures: %d %s", r.Code, r.Msg)
	}
	if n := len(f.Messages("oc_g")); n != 1 {
		t.Errorf("%d messages, want only the last", n)
	}
}
