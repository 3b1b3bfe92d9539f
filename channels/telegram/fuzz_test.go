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

// The fuzz targets here add to FuzzRenderHTML (markup validity),
// FuzzSplitHTML and FuzzSplitText (chunk limits, no visible text lost) in
// markdown_test.go and split_test.go.

// FuzzRenderWords renders Markdown built from fuzzed words and fuzzed
// structure (emphasis, links, images, code, lists, quotes, tables, HTML,
// headings, fences) and checks what a reader sees: the HTML is valid
// Telegram HTML, and its visible text holds every word in order, also once
// split into chunks, whose plain-text fallback fits the limit too.
func FuzzRenderWords(f *testing.F) {
	f.Add("hello world again", []byte{0, 1, 2, 3}, uint16(4096))
	f.Add("Title intro point one two three code", []byte{1, 0, 2, 3, 6, 5, 9}, uint16(10))
	f.Add("שלום עולם مرحبا 中文 粗体 emoji", []byte{5, 13, 1, 7, 6, 2}, uint16(7))
	f.Add("pre script div textarea a b c", []byte{12, 8, 8, 8, 14, 15}, uint16(3))
	f.Add("x y z w v u t s r q p o n m", []byte{9, 9, 10, 11, 4, 3, 2, 1}, uint16(1))
	f.Add(strings.Repeat("long ", 300), []byte{6, 0, 2, 5, 9}, uint16(4096))
	f.Fuzz(func(t *testing.T, text string, shape []byte, limit uint16) {
		words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(words) == 0 {
			return
		}
		words = words[:min(len(words), 400)]
		md := wordsMarkdown(words, shape)
		out := RenderHTML(md)
		mdCheckRendered(t, md, out)
		if at, ok := wordsInOrder(splitVisibleText(out), words); !ok {
			t.Fatalf("word %q lost or out of order\nmarkdown %q\nrendered %q", words[at], md, out)
		}
		lim := 2 + int(limit)%maxText
		chunks := SplitHTML(out, lim)
		splitCheckChunks(t, out, chunks, lim)
		var seen strings.Builder
		for i, c := range chunks {
			plain := htmlToText(c)
			if n := splitUTF16Len(plain); n > lim {
				t.Fatalf("chunk %d: plain-text fallback has %d units > %d", i, n, lim)
			}
			seen.WriteString(plain)
		}
		if at, ok := wordsInOrder(seen.String(), words); !ok {
			t.Fatalf("word %q lost or out of order across %d chunks of %d\nmarkdown %q", words[at], len(chunks), lim, md)
		}
	})
}

// wordsInOrder reports whether the words occur in s in order (each after
// the previous one), or the index of the first that does not.
func wordsInOrder(s string, words []string) (int, bool) {
	for i, w := range words {
		j := strings.Index(s, w)
		if j < 0 {
			return i, false
		}
		s = s[j+len(w):]
	}
	return 0, true
}

// wordsMarkdown builds Markdown from words (letters and digits only, so
// they cannot form markup), shaped by the bytes of shape. Link targets,
// fence info strings and such hold no words: those are not visible text.
func wordsMarkdown(words []string, shape []byte) string {
	next := func() byte {
		if len(shape) == 0 {
			return 0
		}
		b := shape[0]
		shape = shape[1:]
		return b
	}
	inline := func(w string) string {
		switch next() % 16 {
		case 1:
			return "**" + w + "**"
		case 2:
			return "*" + w + "*"
		case 3:
			return "_" + w + "_"
		case 4:
			return "~~" + w + "~~"
		case 5:
			return "`" + w + "`"
		case 6:
			return "[" + w + "](https://example.com/p?a=1&b=2)"
		case 7:
			return "![" + w + "](https://example.com/i.png)"
		case 8:
			return "<" + w + ">"
		case 9:
			return `\*` + w + `\*`
		case 10:
			return "***" + w + "***"
		case 11:
			return "[" + w + "](javascript:alert(1))"
		case 12:
			return "&amp;" + w + " &lt;"
		case 13:
			return "<https://example.com/x> " + w
		case 14:
			return "[**" + w + "** `c`](https://example.com)"
		case 15:
			return "[" + w + "]"
		}
		return w
	}
	seps := []string{" ", " ", "\n", " \u200B", " \u202E", "  \n", "\u00A0", "\t"}
	var b strings.Builder
	for len(words) > 0 {
		n := 1 + int(next())%6
		n = min(n, len(words))
		ws := words[:n]
		words = words[n:]
		line := func(sep string) string {
			parts := make([]string, len(ws))
			for i, w := range ws {
				parts[i] = inline(w)
			}
			return strings.Join(parts, sep)
		}
		table := false
		switch next() % 16 {
		case 1:
			b.WriteString("# " + line(" "))
		case 2:
			for i, w := range ws {
				b.WriteString(strings.Repeat("  ", i%3) + "- " + inline(w) + "\n")
			}
		case 3:
			for i, w := range ws {
				b.WriteString(strconv.Itoa(i+1) + ". " + inline(w) + "\n")
			}
		case 4:
			for i, w := range ws {
				b.WriteString("- [" + map[bool]string{true: "x", false: " "}[i%2 == 0] + "] " + inline(w) + "\n")
			}
		case 5:
			b.WriteString("> " + line("\n> "))
		case 6:
			b.WriteString("```go\n" + strings.Join(ws, "\n") + "\n```")
		case 7:
			b.WriteString("```\n" + line(" ")) // unclosed: runs to the end
		case 8:
			b.WriteString("    " + strings.Join(ws, " "))
		case 9:
			b.WriteString("| " + strings.Join(ws, " | ") + " |\n|" + strings.Repeat("---|", len(ws)) + "\n| " + inline(ws[0]) + " |")
			table = true
		case 10:
			b.WriteString(line(" ") + "\n===")
		case 11:
			b.WriteString(line(" ") + "\n\n---")
		case 12:
			b.WriteString("<div class=\"x\">\n" + line(" ") + "\n</div>")
		case 13:
			b.WriteString("> - " + line("\n> - "))
		case 14:
			b.WriteString(">> " + line(" "))
		default:
			b.WriteString(line(seps[int(next())%len(seps)]))
		}
		// A table runs to a blank line: a next line would be its row, and
		// GFM drops a row's cells beyond the header's (words lost by the
		// spec, not by the renderer).
		if next()%4 == 0 && !table {
			b.WriteString("\n")
		} else {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

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
		if splitUTF16Len(s) <= n {
			if out != s {
				t.Fatalf("cutText(%q, %d) = %q; it fits", s, n, out)
			}
			return
		}
		head, ok := strings.CutSuffix(out, "…")
		switch {
		case !ok || !strings.HasPrefix(s, head):
			t.Fatalf("cutText(%q, %d) = %q: not a prefix and an ellipsis", s, n, out)
		case splitUTF16Len(out) > n:
			t.Fatalf("cutText(%q, %d) = %q: %d units", s, n, out, splitUTF16Len(out))
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
		if updateNorm(src) != "" || m.Document != nil || len(m.Photo) > 0 {
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
	c, err := New(Options{Token: "123:t", APIURL: srv.URL, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c.me = &models.User{ID: 42, IsBot: true, Username: "DeerBot"}
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
