package lark

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/larksuite/oapi-sdk-go/v3/event/dispatcher"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/deerflow/deerflow/channels"
)

const fuzzBot = "ou_bot"

func fuzzChannel(tb testing.TB, allow []string) *Channel {
	tb.Helper()
	c, err := New(Options{AppID: "cli_fuzz", AppSecret: "secret", Domain: "http://127.0.0.1:1", AllowedUsers: allow,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	c.bot = fuzzBot
	return c
}

// eventSeeds are im.message.receive_v1 events as the long connection
// delivers them: p2p text, group mentions, topics, replies, posts, files,
// bots, and malformed ones.
var eventSeeds = []string{
	`{"schema":"2.0","header":{"event_id":"e1","event_type":"im.message.receive_v1"},"event":{"sender":{"sender_id":{"open_id":"ou_1","user_id":"u1"},"sender_type":"user"},"message":{"message_id":"om_1","chat_id":"oc_1","chat_type":"p2p","message_type":"text","content":"{\"text\":\"hello  there\"}"}}}`,
	`{"schema":"2.0","header":{"event_id":"e2","event_type":"im.message.receive_v1"},"event":{"sender":{"sender_id":{"open_id":"ou_2"},"sender_type":"user"},"message":{"message_id":"om_2","chat_id":"oc_g","chat_type":"group","message_type":"text","content":"{\"text\":\"@_user_1 ask @_user_2 and @_user_10\"}","mentions":[{"key":"@_user_1","id":{"open_id":"ou_bot"},"name":"Deer"},{"key":"@_user_2","id":{"open_id":"ou_3"},"name":"Ann"},{"key":"@_user_10","id":{"open_id":"ou_4"},"name":"Bob"}]}}}`,
	`{"schema":"2.0","header":{"event_id":"e3","event_type":"im.message.receive_v1"},"event":{"sender":{"sender_id":{"open_id":"ou_2"},"sender_type":"user"},"message":{"message_id":"om_3","root_id":"om_0","parent_id":"om_9","thread_id":"omt_1","chat_id":"oc_g","chat_type":"group","message_type":"post","content":"{\"zh_cn\":{\"title\":\"T\",\"content\":[[{\"tag\":\"at\",\"user_id\":\"@_user_1\"},{\"tag\":\"text\",\"text\":\" see \"},{\"tag\":\"a\",\"text\":\"docs\",\"href\":\"https://x.y\"}],[{\"tag\":\"code_block\",\"text\":\"x := 1\"}]]}}","mentions":[{"key":"@_user_1","id":{"open_id":"ou_bot"},"name":"Deer"}]}}}`,
	`{"schema":"2.0","header":{"event_id":"e4","event_type":"im.message.receive_v1"},"event":{"sender":{"sender_id":{"open_id":"ou_1"},"sender_type":"user"},"message":{"message_id":"om_4","chat_id":"oc_1","chat_type":"p2p","message_type":"file","content":"{\"file_key\":\"fk\",\"file_name\":\"../../etc/passwd\"}"}}}`,
	`{"schema":"2.0","header":{"event_id":"e5","event_type":"im.message.receive_v1"},"event":{"sender":{"sender_id":{"open_id":"ou_1"},"sender_type":"user"},"message":{"message_id":"om_5","chat_id":"oc_1","chat_type":"p2p","message_type":"image","content":"{\"image_key\":\"img_1\"}"}}}`,
	`{"schema":"2.0","header":{"event_id":"e6","event_type":"im.message.receive_v1"},"event":{"sender":{"sender_id":{"open_id":"ou_bot"},"sender_type":"app"},"message":{"message_id":"om_6","chat_id":"oc_1","chat_type":"p2p","message_type":"text","content":"{\"text\":\"from a bot\"}"}}}`,
	`{"schema":"2.0","header":{"event_id":"e7","event_type":"im.message.receive_v1"},"event":{"sender":{"sender_id":{"open_id":"ou_2"},"sender_type":"user"},"message":{"message_id":"om_7","chat_id":"oc_g","chat_type":"group","message_type":"text","content":"{\"text\":\"chatter\"}","mentions":[null,{"key":""},{"id":null}]}}}`,
	`{"schema":"2.0","header":{"event_type":"im.message.receive_v1"},"event":{"sender":null,"message":{}}}`,
	`{"schema":"2.0","header":{"event_type":"im.message.receive_v1"},"event":{"sender":{"sender_type":"user"},"message":{"message_type":"text","content":"{\"text\":\"\\u202eשלום\\u200b\\u0000 \\ud800\"}"}}}`,
	"{\"schema\":\"2.0\",\"header\":{\"event_type\":\"im.message.receive_v1\"},\"event\":{\"sender\":{\"sender_type\":\"user\"},\"message\":{\"message_type\":\"text\",\"content\":\"{\\\"text\\\":\\\"bad \xff\\\"}\"}}}",
}

// FuzzReceiveEvent hands a raw event to the SDK's dispatcher (what the
// long connection does) and checks the bus message made of it: never a
// panic; a message only from a person the allow-list lets in, in a group
// only when the bot is mentioned; the event's chat, sender, message and
// event ids unchanged; the topic and reply from the message's thread,
// root and parent; text with the bot's mention removed, other mentions as
// @name and whitespace collapsed; and every plain p2p text delivered.
func FuzzReceiveEvent(f *testing.F) {
	for _, s := range eventSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	open, closed := fuzzChannel(f, nil), fuzzChannel(f, []string{"ou_1", "u2"})
	var check func(*larkim.P2MessageReceiveV1) // this input's checks
	d := dispatcher.NewEventDispatcher("", "").OnP2MessageReceiveV1(func(_ context.Context, e *larkim.P2MessageReceiveV1) error {
		check(e)
		return nil
	})
	f.Fuzz(func(t *testing.T, raw []byte, useAllow bool) {
		c := open
		if useAllow {
			c = closed
		}
		check = func(e *larkim.P2MessageReceiveV1) { checkEvent(t, c, e) }
		d.Do(context.Background(), raw)
	})
}

func checkEvent(t *testing.T, c *Channel, e *larkim.P2MessageReceiveV1) {
	in := c.inbound(e)
	if e == nil || e.Event == nil || e.Event.Message == nil || e.Event.Sender == nil {
		if in != nil {
			t.Fatalf("a message from an incomplete event: %+v", in)
		}
		return
	}
	m, s := e.Event.Message, e.Event.Sender
	var openID, userID string
	if s.SenderId != nil {
		openID, userID = str(s.SenderId.OpenId), str(s.SenderId.UserId)
	}
	want := contentText(m, c.bot)
	if in == nil {
		if str(s.SenderType) == "user" && c.allowed(openID, userID) && str(m.ChatType) == "p2p" &&
			str(m.MessageType) == "text" && want != "" {
			t.Fatalf("a p2p text from an allowed person was dropped: %q", want)
		}
		return
	}
	eventKey := ""
	if e.EventV2Base != nil && e.EventV2Base.Header != nil && e.EventV2Base.Header.EventID != "" {
		eventKey = "lark:event:" + e.EventV2Base.Header.EventID
	}
	switch {
	case str(s.SenderType) != "user":
		t.Fatalf("a message from a %q", str(s.SenderType))
	case !c.allowed(openID, userID):
		t.Fatalf("a message from %q/%q, who is not allowed", openID, userID)
	case in.Channel != Name || in.ChatID != str(m.ChatId) || in.UserID != openID || in.MessageID != str(m.MessageId) ||
		in.EventKey != eventKey:
		t.Fatalf("ids changed: %+v", in)
	case in.Group != (str(m.ChatType) != "p2p"):
		t.Fatalf("group = %v for chat type %q", in.Group, str(m.ChatType))
	case strings.TrimSpace(in.Text) == "" && len(in.Files) == 0:
		t.Fatalf("an empty message: %+v", in)
	case in.Text != strings.Join(strings.Fields(in.Text), " "):
		t.Fatalf("whitespace not collapsed: %q", in.Text)
	case str(m.MessageType) == "text" && in.Text != want:
		t.Fatalf("text %q, want %q", in.Text, want)
	}
	wantTopic, wantReply := "", ""
	if in.Group {
		mentioned := false
		for _, mn := range m.Mentions {
			if mn != nil && mn.Id != nil && str(mn.Id.OpenId) == c.bot {
				mentioned = true
			}
		}
		if !mentioned {
			t.Fatalf("a group message that does not mention the bot: %+v", in)
		}
		switch {
		case str(m.ThreadId) != "":
			wantTopic = "t" + str(m.ThreadId)
		case str(m.ParentId) != "":
			wantTopic, wantReply = "m"+str(m.RootId), str(m.ParentId)
		default:
			wantTopic = "m" + str(m.MessageId)
		}
	}
	if in.Topic != wantTopic || in.ReplyTo != wantReply {
		t.Fatalf("topic %q reply %q, want %q %q", in.Topic, in.ReplyTo, wantTopic, wantReply)
	}
}

// contentText is what a text message should read: at each place the
// longest mention key found there replaced (the bot's by nothing, others'
// by @name; a later mention of a key wins), whitespace collapsed. It is
// "" for other message types.
func contentText(m *larkim.EventMessage, bot string) string {
	if str(m.MessageType) != "text" {
		return ""
	}
	var t struct {
		Text string `json:"text"`
	}
	json.Unmarshal([]byte(str(m.Content)), &t)
	names := map[string]string{}
	for _, mn := range m.Mentions {
		if mn == nil || str(mn.Key) == "" {
			continue
		}
		if mn.Id != nil && str(mn.Id.OpenId) == bot {
			names[str(mn.Key)] = ""
		} else {
			names[str(mn.Key)] = "@" + str(mn.Name)
		}
	}
	var b strings.Builder
	for s := t.Text; s != ""; {
		best := ""
		for k := range names {
			if len(k) > len(best) && strings.HasPrefix(s, k) {
				best = k
			}
		}
		if best != "" {
			b.WriteString(names[best])
			s = s[len(best):]
			continue
		}
		b.WriteByte(s[0])
		s = s[1:]
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// FuzzContent builds a message of each type around fuzzed content (the
// JSON string inside the event, which mutating the whole event rarely
// keeps valid) and fuzzed mentions, and checks content: text as
// contentText says, files named from their keys, never a panic.
func FuzzContent(f *testing.F) {
	f.Add(uint8(0), `{"text":"@_user_1 hi @_user_10 and @_user_2"}`, "@_user_1=Deer|@_user_2=Ann|@_user_10=Bob", uint8(0))
	f.Add(uint8(0), `{"text":"@_user_1@_user_1x"}`, "@_user_1=|@_user_1=Z|=Empty", uint8(1))
	f.Add(uint8(1), `{"title":"T","content":[[{"tag":"text","text":"a"},{"tag":"at","user_id":"@_user_1"},{"tag":"a","href":"https://x","text":"l"}]]}`, "@_user_1=Deer", uint8(0))
	f.Add(uint8(1), `{"en_us":{"content":[[{"tag":"md","text":"**b**"}]]}}`, "", uint8(0))
	f.Add(uint8(2), `{"image_key":"img_../x"}`, "", uint8(0))
	f.Add(uint8(3), `{"file_key":"fk","file_name":"..\\..\\x\u0000.exe"}`, "", uint8(0))
	f.Add(uint8(0), `{"text":"\u202eשלום\u200d\u0000"}`, "\u200d=ZW", uint8(9))
	f.Add(uint8(0), "{\"text\":\"bad \xff\"}", "", uint8(0))
	types := []string{"text", "post", "image", "file", "media", "audio", "sticker", ""}
	c := fuzzChannel(f, nil)
	f.Fuzz(func(t *testing.T, kind uint8, content, mentions string, botAt uint8) {
		m := &larkim.EventMessage{MessageType: &types[int(kind)%len(types)], Content: &content, MessageId: ptr("om_1")}
		if mentions != "" {
			for i, kv := range strings.Split(mentions, "|") {
				k, v, _ := strings.Cut(kv, "=")
				id := "ou_" + v
				if i == int(botAt) {
					id = fuzzBot
				}
				m.Mentions = append(m.Mentions, &larkim.MentionEvent{Key: ptr(k), Name: ptr(v), Id: &larkim.UserId{OpenId: ptr(id)}})
			}
		}
		text, files, mentioned := c.content(m)
		wantMentioned := false
		for _, mn := range m.Mentions {
			wantMentioned = wantMentioned || str(mn.Id.OpenId) == fuzzBot
		}
		switch {
		case mentioned != wantMentioned:
			t.Fatalf("mentioned = %v", mentioned)
		case text != strings.Join(strings.Fields(text), " "):
			t.Fatalf("whitespace not collapsed: %q", text)
		case str(m.MessageType) == "text" && text != contentText(m, fuzzBot):
			t.Fatalf("text %q, want %q", text, contentText(m, fuzzBot))
		}
		for _, f := range files {
			if f.Name == "" || f.Open == nil {
				t.Fatalf("a file without a name or opener: %+v", f)
			}
		}
	})
}

func ptr(s string) *string { return &s }

// FuzzCard checks the cards a finished answer becomes (split as final
// does, each card(part)): valid JSON within Lark's 30 KB card limit, a
// v2 card whose one markdown element holds the part.
func FuzzCard(f *testing.F) {
	f.Add("hello **world**")
	f.Add("```json\n" + strings.Repeat(`{"a":"\\\"<&>\""}`+"\n", 800) + "```")
	f.Add(strings.Repeat("\x1b[31mred\x1b[0m ", 2000))
	f.Add(strings.Repeat("\x00\x01\x7f", 5000))
	f.Add(strings.Repeat("\u2028\u202e\u200b", 3000))
	f.Add(strings.Repeat("\xff\xfe", 4000))
	f.Fuzz(func(t *testing.T, md string) {
		for md != "" && len(md) <= maxCardMarkdown {
			md += "\n" + md
		}
		for i, part := range channels.SplitMarkdown(md, maxCardMarkdown) {
			raw := card(part)
			var v struct {
				Schema string `json:"schema"`
				Body   struct {
					Elements []struct {
						Tag     string `json:"tag"`
						Content string `json:"content"`
					} `json:"elements"`
				} `json:"body"`
			}
			switch err := json.Unmarshal([]byte(raw), &v); {
			case err != nil:
				t.Fatalf("part %d: card is not JSON: %v", i, err)
			case len(raw) > 30_000:
				t.Fatalf("part %d: card has %d bytes (part %d bytes)", i, len(raw), len(part))
			case v.Schema != "2.0" || len(v.Body.Elements) != 1 || v.Body.Elements[0].Tag != "markdown":
				t.Fatalf("part %d: card %s", i, raw)
			case !utf8.ValidString(v.Body.Elements[0].Content):
				t.Fatalf("part %d: invalid UTF-8 in the card", i)
			case cardPlain(part) && v.Body.Elements[0].Content != part:
				t.Fatalf("part %d: card holds %q, want %q", i, v.Body.Elements[0].Content, part)
			}
		}
	})
}

// cardPlain reports whether s is valid UTF-8 without control characters
// other than tab and line breaks: such text goes into a card unchanged.
func cardPlain(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

// TestContentMentions: a null mention panicked, an empty key put the
// name between every character, and "@_user_1" was replaced inside
// "@_user_10" (found by FuzzReceiveEvent and FuzzContent).
func TestContentMentions(t *testing.T) {
	c := fuzzChannel(t, nil)
	mention := func(key, name, id string) *larkim.MentionEvent {
		return &larkim.MentionEvent{Key: ptr(key), Name: ptr(name), Id: &larkim.UserId{OpenId: ptr(id)}}
	}
	var many []*larkim.MentionEvent
	for i := 1; i <= 10; i++ {
		many = append(many, mention("@_user_"+strconv.Itoa(i), "P"+strconv.Itoa(i), "ou_"+strconv.Itoa(i)))
	}
	many[0] = mention("@_user_1", "Deer", fuzzBot)
	for _, tc := range []struct {
		text     string
		mentions []*larkim.MentionEvent
		want     string
	}{
		{"@_user_1 hi", []*larkim.MentionEvent{nil, mention("@_user_1", "Deer", fuzzBot)}, "hi"},
		{"hello", []*larkim.MentionEvent{mention("", "Ann", "ou_3")}, "hello"},
		{"@_user_1 ask @_user_10 and @_user_2", many, "ask @P10 and @P2"},
	} {
		content := `{"text":` + strconv.Quote(tc.text) + `}`
		m := &larkim.EventMessage{MessageType: ptr("text"), Content: &content, Mentions: tc.mentions}
		text, _, mentioned := c.content(m)
		if text != tc.want || !mentioned && tc.want == "hi" {
			t.Errorf("content(%q) = %q, %v; want %q", tc.text, text, mentioned, tc.want)
		}
	}
}

// TestCardSize: control characters and invalid UTF-8, six bytes each in
// JSON, made a card of one full part over Lark's 30 KB (found by
// FuzzCard).
func TestCardSize(t *testing.T) {
	for _, md := range []string{strings.Repeat("\x01", maxCardMarkdown), strings.Repeat("\xff", maxCardMarkdown)} {
		if n := len(card(md)); n > 30_000 {
			t.Errorf("card of %q… has %d bytes", md[:1], n)
		}
	}
	if c := card("a\tb\nc \x1b[1mbold\x1b[0m"); !strings.Contains(c, `"a\tb\nc [1mbold[0m"`) {
		t.Errorf("card = %s", c)
	}
}
