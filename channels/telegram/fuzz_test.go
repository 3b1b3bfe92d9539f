package telegram

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"
)

// FuzzCutText checks the progress text cut: at most n UTF-16 units, a
// prefix of the input plus "…" when cut, the input itself when it fits,
// never a split character.
func FuzzCutText(f *testing.F) {
	f.Add("ab😀cd", uint16(4))
	f.Add(strings.Repeat("é", 5000), uint16(4096))
	f.Add("\u202Eשלום\u200D👨‍👩‍👧", uint16(3))
	f.Add("a\xffb\x80\x80c", uint16(2))
	f.Add("00000", uint16(4)) // fits exactly: was cut
	f.Fuzz(func(t *testing.T, s string, n16 uint16) {
		n := 1 + int(n16)%5000
		out := cutText(s, n)
		if utf16Len(s) <= n {
			if out != s {
				t.Fatalf("cutText(%q, %d) = %q; it fits", s, n, out)
			}
			return
		}
		head, ok := strings.CutSuffix(out, "…")
		switch {
		case !ok || !strings.HasPrefix(s, head):
			t.Fatalf("cutText(%q, %d) = %q: not a prefix and an ellipsis", s, n, out)
		case utf16Len(out) > n:
			t.Fatalf("cutText(%q, %d) = %q: %d units", s, n, out, utf16Len(out))
		case utf8.ValidString(s) && !utf8.ValidString(out):
			t.Fatalf("cutText(%q, %d) = %q: split a character", s, n, out)
		}
	})
}

// updateSeeds are getUpdates replies: private messages, group mentions
// (with UTF-16 offsets after an emoji), commands, topics, replies, files,
// bots, and malformed ones.
var updateSeeds = []string{
	`{"ok":true,"result":[{"update_id":1,"message":{"message_id":10,"from":{"id":12345,"first_name":"A","username":"ann"},"chat":{"id":12345,"type":"private"},"date":1,"text":"hello there"}}]}`,
	`{"ok":true,"result":[{"update_id":2,"message":{"message_id":11,"from":{"id":7,"first_name":"B"},"chat":{"id":-100,"type":"supergroup"},"date":1,"text":"🦌 hey @DeerBot look","entities":[{"type":"mention","offset":7,"length":8}]}}]}`,
	`{"ok":true,"result":[{"update_id":3,"message":{"message_id":12,"from":{"id":7,"first_name":"B"},"chat":{"id":-100,"type":"supergroup"},"date":1,"is_topic_message":true,"message_thread_id":5,"text":"/models@DeerBot big","entities":[{"type":"bot_command","offset":0,"length":15}],"reply_to_message":{"message_id":5,"chat":{"id":-100,"type":"supergroup"},"date":1}}}]}`,
	`{"ok":true,"result":[{"update_id":4,"message":{"message_id":13,"from":{"id":7,"first_name":"B"},"chat":{"id":-100,"type":"group"},"date":1,"text":"and then?","reply_to_message":{"message_id":9,"from":{"id":42,"is_bot":true,"first_name":"D"},"chat":{"id":-100,"type":"group"},"date":1}}}]}`,
	`{"ok":true,"result":[{"update_id":5,"message":{"message_id":14,"from":{"id":12345,"first_name":"A"},"chat":{"id":12345,"type":"private"},"date":1,"caption":"see file","document":{"file_id":"f1","file_unique_id":"u1","file_name":"../../etc/passwd","file_size":10}}}]}`,
	`{"ok":true,"result":[{"update_id":6,"message":{"message_id":15,"from":{"id":12345,"first_name":"A"},"chat":{"id":12345,"type":"private"},"date":1,"photo":[{"file_id":"p1","file_unique_id":"u","width":1,"height":1},{"file_id":"p2","file_unique_id":"v","width":2,"height":2,"file_size":99}]}}]}`,
	`{"ok":true,"result":[{"update_id":7,"message":{"message_id":16,"from":{"id":99,"is_bot":true,"first_name":"Bot"},"chat":{"id":12345,"type":"private"},"date":1,"text":"from a bot"}}]}`,
	`{"ok":true,"result":[null,{"update_id":8},{"update_id":9,"edited_message":{"message_id":1,"chat":{"id":1,"type":"private"},"date":1,"text":"x"}}]}`,
	`{"ok":true,"result":[{"update_id":10,"message":{"message_id":17,"from":{"id":7},"chat":{"id":-1,"type":"group"},"date":1,"text":"@deerbot\u0000\u200b\u202e\ud800 x","entities":[{"type":"mention","offset":0,"length":8},{"type":"mention","offset":-3,"length":99},{"type":"text_mention","offset":0,"length":1,"user":{"id":42,"is_bot":true,"first_name":"D"}}]}}]}`,
	`{"ok":true,"result":[{"update_id":11,"message":{"message_id":18,"from":{"id":12345,"first_name":"A"},"chat":{"id":12345,"type":"private"},"date":1,"text":"/start@DeerBot","entities":[{"type":"bot_command","offset":0,"length":14}]}}]}`,
	`{"ok":true,"result":[{"update_id":12,"message":{"message_id":19,"from":{"id":7},"chat":{"id":-1,"type":"group"},"date":1,"text":"/status@OtherBot","entities":[{"type":"bot_command","offset":0,"length":16}]}}]}`,
	`{"ok":true,"result":[{"update_id":14,"message":{"message_id":21,"from":{"id":12345,"first_name":"A"},"chat":{"id":12345,"type":"private"},"date":1,"voice":{"duration":2,"mime_type":"audio/ogg","file_id":"AwAC1","file_unique_id":"u1","file_size":900}}}]}`,
	`{"ok":true,"result":[{"update_id":15,"message":{"message_id":22,"from":{"id":7},"chat":{"id":-1,"type":"group"},"date":1,"caption":"@deerbot listen","caption_entities":[{"type":"mention","offset":0,"length":8}],"audio":{"duration":2,"file_id":"CQAC1","file_unique_id":"u2","mime_type":"audio/mpeg"}}}]}`,
	`{"ok":false,"error_code":429,"description":"Too Many Requests","parameters":{"retry_after":3}}`,
	"{\"ok\":true,\"result\":[{\"update_id\":13,\"message\":{\"message_id\":20,\"from\":{\"id\":1},\"chat\":{\"id\":1,\"type\":\"private\"},\"date\":1,\"text\":\"bad \xff utf8\"}}]}",
}

// FuzzUpdates decodes a getUpdates reply the way poll does and turns each
// update into a bus message. It must never panic, and a message must come
// only from a person the allow-list lets in, carry the update's ids
// unchanged, keep its text but for the bot's @name (and whitespace in
// groups), and be produced for every allowed private text.
func FuzzUpdates(f *testing.F) {
	for _, s := range updateSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	newChannel := func(allow []string) *Channel {
		c, err := New(Options{Token: "123:fuzz", APIURL: "http://127.0.0.1:1", AllowedUsers: allow, Logger: log})
		if err != nil {
			f.Fatal(err)
		}
		c.me = &models.User{ID: 42, IsBot: true, Username: "DeerBot"}
		return c
	}
	open, closed := newChannel(nil), newChannel([]string{"12345", "@ann"})
	f.Fuzz(func(t *testing.T, data []byte, useAllow bool) {
		var r struct {
			OK     bool             `json:"ok"`
			Result []*models.Update `json:"result"`
		}
		if json.Unmarshal(data, &r) != nil {
			return
		}
		c := open
		if useAllow {
			c = closed
		}
		for _, u := range r.Result {
			checkInbound(t, c, u)
		}
	})
}

func checkInbound(t *testing.T, c *Channel, u *models.Update) {
	in := c.inbound(u)
	if in == nil {
		if u == nil || u.Message == nil || u.Message.From == nil || u.Message.From.IsBot ||
			!c.allowed(u.Message.From) || u.Message.Chat.Type != models.ChatTypePrivate {
			return
		}
		m := u.Message
		src := m.Text
		if src == "" {
			src = m.Caption
		}
		if updateNorm(src) != "" || m.Document != nil || len(m.Photo) > 0 || m.Voice != nil || m.Audio != nil {
			t.Fatalf("a private message from an allowed person was dropped: %+v", m)
		}
		return
	}
	m := u.Message
	switch {
	case m == nil || m.From == nil || m.From.IsBot:
		t.Fatalf("a message from no person: %+v", in)
	case !c.allowed(m.From):
		t.Fatalf("a message from %d, who is not allowed", m.From.ID)
	case in.Channel != Name || in.ChatID != strconv.FormatInt(m.Chat.ID, 10) ||
		in.UserID != strconv.FormatInt(m.From.ID, 10) || in.UserName != m.From.Username ||
		in.MessageID != strconv.Itoa(m.ID) || in.EventKey != "telegram:update:"+strconv.FormatInt(u.ID, 10):
		t.Fatalf("ids changed: %+v from %+v", in, m)
	case in.Group != (m.Chat.Type != models.ChatTypePrivate):
		t.Fatalf("group = %v for chat type %q", in.Group, m.Chat.Type)
	case strings.TrimSpace(in.Text) == "" && len(in.Files) == 0:
		t.Fatalf("an empty message: %+v", in)
	}
	wantTopic, wantReply := "", ""
	if in.Group {
		wantTopic = "m" + strconv.Itoa(m.ID)
		if m.IsTopicMessage && m.MessageThreadID != 0 {
			wantTopic = "t" + strconv.Itoa(m.MessageThreadID)
		}
		if r := m.ReplyToMessage; r != nil && !(m.IsTopicMessage && r.ID == m.MessageThreadID) {
			wantReply = strconv.Itoa(r.ID)
		}
	}
	if in.Topic != wantTopic || in.ReplyTo != wantReply {
		t.Fatalf("topic %q reply %q, want %q %q", in.Topic, in.ReplyTo, wantTopic, wantReply)
	}
	src := m.Text
	if src == "" {
		src = m.Caption
	}
	if updateNorm(in.Text) != updateNorm(src) {
		t.Fatalf("text %q does not come from %q", in.Text, src)
	}
	switch {
	case m.Voice != nil:
		if len(in.Files) != 1 || !in.Files[0].Voice || !strings.HasPrefix(in.Files[0].Name, "voice_"+strconv.Itoa(m.ID)+".") {
			t.Fatalf("voice note became %+v", in.Files)
		}
	case m.Audio != nil:
		if len(in.Files) != 1 || in.Files[0].Voice || in.Files[0].Name == "" {
			t.Fatalf("audio became %+v", in.Files)
		}
	case m.Document != nil:
		want := m.Document.FileName
		if want == "" {
			want = "document_" + strconv.Itoa(m.ID)
		}
		if len(in.Files) != 1 || in.Files[0].Name != want {
			t.Fatalf("document %q became %+v", want, in.Files)
		}
	case len(m.Photo) > 0:
		if len(in.Files) != 1 || in.Files[0].Name != "photo_"+strconv.Itoa(m.ID)+".jpg" {
			t.Fatalf("photo became %+v", in.Files)
		}
	default:
		if len(in.Files) != 0 {
			t.Fatalf("files from nowhere: %+v", in.Files)
		}
	}
}

// updateNorm is text as far as the channel may change it: whitespace,
// '@' and the bot's name (in any case) removed. Taking the name out until
// none is left gives the same result whichever occurrences the channel
// removed, since the name cannot overlap itself.
func updateNorm(s string) string {
	s = strings.ToLower(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '@' {
			return -1
		}
		return r
	}, s))
	for strings.Contains(s, "deerbot") {
		s = strings.ReplaceAll(s, "deerbot", "")
	}
	return s
}

// TestPollSkipsNullUpdates: a getUpdates reply holding null (found by
// FuzzUpdates) crashed the poll loop; it is skipped, and the updates
// after it are confirmed.
func TestPollSkipsNullUpdates(t *testing.T) {
	offsets := make(chan string, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/getUpdates") {
			http.NotFound(w, r)
			return
		}
		off := r.FormValue("offset")
		offsets <- off
		if off == "1" {
			io.WriteString(w, `{"ok":true,"result":[null,{"update_id":5},null]}`)
			return
		}
		cancel()
		io.WriteString(w, `{"ok":true,"result":[]}`)
	}))
	defer srv.Close()
	c := pollingChannel(t, srv.URL)
	if err := c.poll(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if first, second := <-offsets, <-offsets; first != "1" || second != "6" {
		t.Errorf("offsets %s, %s; want 1, 6 (update 5 confirmed)", first, second)
	}
}

// TestCutTextExactFit: text of exactly n units was cut (found by
// FuzzCutText).
func TestCutTextExactFit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"00000", 5, "00000"},
		{"ab😀", 4, "ab😀"},
		{"ab😀c", 4, "ab…"},
		{"abcdef", 5, "abcd…"},
	} {
		if got := cutText(tc.in, tc.n); got != tc.want {
			t.Errorf("cutText(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// utf16Len is the length of s in UTF-16 units, as Telegram counts.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}
