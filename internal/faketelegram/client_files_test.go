package faketelegram_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/internal/faketelegram"
)

func download(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("download %s: %d %v", url, resp.StatusCode, err)
	}
	return data
}

func TestDocumentsAndFiles(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	ctx := context.Background()
	s.PushMessage(faketelegram.Private(ann, "hi"))

	data := []byte("0123456789")
	m, err := b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: ann.ID, Caption: "<i>the</i> report", ParseMode: models.ParseModeHTML,
		Document: &models.InputFileUpload{Filename: "report.txt", Data: bytes.NewReader(data)}})
	if err != nil {
		t.Fatal(err)
	}
	d := m.Document
	if d == nil || d.FileName != "report.txt" || d.FileSize != 10 || d.MimeType != "text/plain" || d.FileID == "" || d.FileUniqueID == "" ||
		m.Caption != "the report" || len(m.CaptionEntities) != 1 || m.CaptionEntities[0].Type != "italic" {
		t.Fatalf("document message = %+v", m)
	}
	c := s.CallsOf("sendDocument")[0]
	if len(c.Files) != 1 || c.Files[0].Field != "document" || c.Files[0].Filename != "report.txt" || !bytes.Equal(c.Files[0].Data, data) {
		t.Fatalf("call files = %+v", c.Files)
	}
	sent := s.Messages(ann.ID)[0]
	if sent.Document == nil || !bytes.Equal(sent.Document.Data, data) || sent.PlainText != "the report" {
		t.Fatalf("sent = %+v", sent)
	}
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: ann.ID, MessageID: m.ID, Text: "x"})
	wantErr(t, err, bot.ErrorBadRequest, "there is no text in the message to edit")

	// The bot's own upload can be fetched back, and re-sent by file_id.
	f, err := b.GetFile(ctx, &bot.GetFileParams{FileID: d.FileID})
	if err != nil || f.FileSize != 10 || f.FilePath == "" {
		t.Fatalf("getFile = %+v, %v", f, err)
	}
	if got := download(t, b.FileDownloadLink(f)); !bytes.Equal(got, data) {
		t.Fatalf("downloaded %q", got)
	}
	again, err := b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: ann.ID, Document: &models.InputFileString{Data: d.FileID}})
	if err != nil || again.Document.FileID != d.FileID {
		t.Fatalf("resend = %+v, %v", again, err)
	}
	_, err = b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: ann.ID, Document: &models.InputFileString{Data: "nope"}})
	wantErr(t, err, bot.ErrorBadRequest, "wrong file identifier/HTTP URL specified")

	// A file a user sent.
	path := s.AddFile("user-doc-1", []byte("user data"))
	in := faketelegram.Private(ann, "")
	in.Document = &faketelegram.Document{FileID: "user-doc-1", FileUniqueID: "u1", FileName: "notes.md", FileSize: 9}
	s.PushMessage(in)
	f, err = b.GetFile(ctx, &bot.GetFileParams{FileID: "user-doc-1"})
	if err != nil || f.FilePath != path || f.FileSize != 9 {
		t.Fatalf("getFile = %+v, %v", f, err)
	}
	if got := download(t, b.FileDownloadLink(f)); string(got) != "user data" {
		t.Fatalf("downloaded %q", got)
	}
	_, err = b.GetFile(ctx, &bot.GetFileParams{FileID: "unknown"})
	wantErr(t, err, bot.ErrorBadRequest, "Bad Request: invalid file_id")
	s.AddFile("huge", make([]byte, 20<<20+1))
	_, err = b.GetFile(ctx, &bot.GetFileParams{FileID: "huge"})
	wantErr(t, err, bot.ErrorBadRequest, "Bad Request: file is too big")
	if resp, err := http.Get(s.URL + "/file/bot" + token + "/documents/none"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("missing file: %v %v", resp, err)
	}
}

func TestPhoto(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	ctx := context.Background()
	s.PushMessage(faketelegram.Private(ann, "hi"))
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 1600, 900))); err != nil {
		t.Fatal(err)
	}
	m, err := b.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: ann.ID, Caption: "chart",
		Photo: &models.InputFileUpload{Filename: "chart.png", Data: bytes.NewReader(img.Bytes())}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Photo); n != 4 || m.Photo[0].Width != 90 || m.Photo[n-1].Width != 1280 || m.Photo[n-1].Height != 720 || m.Caption != "chart" {
		t.Fatalf("photo = %+v", m.Photo)
	}
	sent := s.Messages(ann.ID)[0]
	if sent.Photo == nil || sent.Photo.Filename != "chart.png" || !bytes.Equal(sent.Photo.Data, img.Bytes()) || sent.Photo.FileID != m.Photo[3].FileID {
		t.Fatalf("sent = %+v", sent.Photo)
	}
	_, err = b.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: ann.ID, Photo: &models.InputFileUpload{Filename: "x.png", Data: bytes.NewReader([]byte("not an image"))}})
	wantErr(t, err, bot.ErrorBadRequest, "IMAGE_PROCESS_FAILED")
	_, err = b.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: ann.ID, Photo: &models.InputFileUpload{Filename: "x.png", Data: bytes.NewReader(make([]byte, 10<<20+1))}})
	wantErr(t, err, bot.ErrorBadRequest, "PHOTO_SAVE_FILE_INVALID")
}

func TestCommandsActionsReactions(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	ctx := context.Background()
	cmds := []models.BotCommand{{Command: "new", Description: "new session"}, {Command: "stop_now", Description: "stop"}}
	if ok, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: cmds}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := s.Commands(); len(got) != 2 || got[1] != (faketelegram.BotCommand{Command: "stop_now", Description: "stop"}) {
		t.Fatalf("commands = %+v", got)
	}
	for _, bad := range [][]models.BotCommand{{{Command: "New", Description: "x"}}, {{Command: "/new", Description: "x"}}, {{Command: "", Description: "x"}}} {
		_, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: bad})
		wantErr(t, err, bot.ErrorBadRequest, "BOT_COMMAND_INVALID")
	}
	_, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "new", Description: ""}}})
	wantErr(t, err, bot.ErrorBadRequest, "description")
	if ok, err := b.DeleteWebhook(ctx, &bot.DeleteWebhookParams{}); !ok || err != nil {
		t.Fatal(ok, err)
	}

	in := s.PushMessage(faketelegram.Private(ann, "hi")).Message
	if ok, err := b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: ann.ID, Action: models.ChatActionTyping}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	_, err = b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: ann.ID, Action: "dancing"})
	wantErr(t, err, bot.ErrorBadRequest, "wrong parameter action in request")

	react := func(emoji string) error {
		_, err := b.SetMessageReaction(ctx, &bot.SetMessageReactionParams{ChatID: ann.ID, MessageID: in.MessageID,
			Reaction: []models.ReactionType{{Type: models.ReactionTypeTypeEmoji, ReactionTypeEmoji: &models.ReactionTypeEmoji{Emoji: emoji}}}})
		return err
	}
	if err := react("👀"); err != nil {
		t.Fatal(err)
	}
	if got := s.Reactions(ann.ID, in.MessageID); !slices.Equal(got, []string{"👀"}) {
		t.Fatalf("reactions = %q", got)
	}
	wantErr(t, react("✅"), bot.ErrorBadRequest, "REACTION_INVALID")
	_, err = b.SetMessageReaction(ctx, &bot.SetMessageReactionParams{ChatID: ann.ID, MessageID: 9999,
		Reaction: []models.ReactionType{{Type: models.ReactionTypeTypeEmoji, ReactionTypeEmoji: &models.ReactionTypeEmoji{Emoji: "👍"}}}})
	wantErr(t, err, bot.ErrorBadRequest, "message to react not found")
}

func TestDraftsCallbacksWebhook(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	ctx := context.Background()
	s.PushMessage(faketelegram.Private(ann, "hi"))
	s.AddChat(group)
	if ok, err := b.SendMessageDraft(ctx, &bot.SendMessageDraftParams{ChatID: ann.ID, DraftID: "7", Text: "thinking…"}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	_, err := b.SendMessageDraft(ctx, &bot.SendMessageDraftParams{ChatID: group.ID, DraftID: "7", Text: "x"})
	wantErr(t, err, bot.ErrorBadRequest, "TEXTDRAFT_PEER_INVALID")

	// An edit without reply_markup removes the keyboard: not "not modified".
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "Stop", CallbackData: "stop"}}}}
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: "working", ReplyMarkup: kb})
	if err != nil || m.ReplyMarkup == nil {
		t.Fatalf("send = %+v, %v", m, err)
	}
	if _, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: ann.ID, MessageID: m.ID, Text: "working"}); err != nil {
		t.Fatal(err)
	}
	cq := s.Push(faketelegram.Update{CallbackQuery: &faketelegram.CallbackQuery{From: ann, Message: &s.Messages(ann.ID)[0].Message, Data: "stop"}}).CallbackQuery
	if ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: cq.ID}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	_, err = b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: cq.ID})
	wantErr(t, err, bot.ErrorBadRequest, "query ID is invalid")

	// While a webhook is set, polling conflicts; deleteWebhook can drop pending updates.
	if ok, err := b.SetWebhook(ctx, &bot.SetWebhookParams{URL: "https://example.org/hook"}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	start(t, b)
	s.WaitFor(func() bool { c := s.CallsOf("getUpdates"); return len(c) > 0 && c[0].Status == 409 })
	if ok, err := b.DeleteWebhook(ctx, &bot.DeleteWebhookParams{DropPendingUpdates: true}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if p := s.Pending(); len(p) != 0 {
		t.Fatalf("pending = %+v", p)
	}
}
