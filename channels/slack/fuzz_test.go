package slack

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/deerflow/deerflow/channels"
)

// eventSeeds are events_api payloads as Socket Mode delivers them (the
// envelope's payload): DMs, mentions, thread replies, file shares, edits,
// bots, ourselves, and malformed ones.
var eventSeeds = []string{
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","channel":"D1","channel_type":"im","user":"U1","text":"hello there","ts":"1700000000.000100"}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"app_mention","channel":"C1","user":"U1","text":"<@UBOT> what is <https://x.io|the docs> &amp; &lt;b&gt;?","ts":"1700000000.000200","thread_ts":"1700000000.000100"}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","channel":"C1","channel_type":"channel","user":"U1","text":"<@UBOT>","ts":"1.2","files":[{"id":"F1","name":"../../etc/passwd","url_private_download":"https://files/x"}]}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","subtype":"file_share","channel":"D1","channel_type":"im","user":"U1","text":"","ts":"1.3","files":[{"id":"F2","name":"a.pdf","size":10}]}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","subtype":"message_changed","channel":"D1","channel_type":"im","message":{"user":"U1","text":"edited","ts":"1.1"},"ts":"1.4"}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","channel":"D1","channel_type":"im","user":"UBOT","text":"our own","ts":"1.5"}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","channel":"D1","channel_type":"im","bot_id":"B9","user":"U9","text":"a bot","ts":"1.6"}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","channel":"C1","channel_type":"channel","user":"U2","text":"chatter","ts":"1.7"}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","channel":"D1","channel_type":"im","user":"U1","text":"\u202eשלום\u200b \u0000 \ud800 <mailto:a@b.c> <@UBOT|bot> &#65;","ts":"1.8"}}`,
	`{"token":"t","team_id":"T1","type":"event_callback","event":{"type":"message","subtype":"file_share","channel":"D1","channel_type":"im","user":"U1","text":"","ts":"1.10","files":[{"id":"F3","name":"audio_message.webm","mimetype":"audio/webm","filetype":"webm","subtype":"slack_audio","media_display_type":"audio","size":900,"url_private_download":"https://files/c"}]}}`,
	`{"token":"t","type":"url_verification","challenge":"c"}`,
	`{"token":"t","type":"event_callback","event":{"type":"reaction_added","user":"U1"}}`,
	`{"token":"t","type":"event_callback","event":null}`,
	"{\"token\":\"t\",\"type\":\"event_callback\",\"event\":{\"type\":\"message\",\"channel\":\"D1\",\"channel_type\":\"im\",\"user\":\"U1\",\"text\":\"bad \xff utf8\",\"ts\":\"1.9\"}}",
}

// FuzzEventsAPI parses an events_api payload with the library's parser
// (the one Socket Mode uses) and turns it into a bus message. Neither may
// panic; a message must come from a person (not a bot, not us, not an
// edit) the allow-list lets in, carry the event's channel, user and ts
// unchanged, never hold the bot's mention, keep plain text as it is, and
// be produced for every plain direct message.
func FuzzEventsAPI(f *testing.F) {
	for _, s := range eventSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	newChannel := func(allow []string) *Channel {
		c, err := New(Options{BotToken: "xoxb-fuzz", AppToken: "xapp-fuzz", AllowedUsers: allow, Logger: log})
		if err != nil {
			f.Fatal(err)
		}
		c.botUser, c.botID = "UBOT", "BBOT"
		return c
	}
	open, closed := newChannel(nil), newChannel([]string{"U1"})
	f.Fuzz(func(t *testing.T, payload []byte, useAllow bool) {
		ev, err := slackevents.ParseEvent(json.RawMessage(payload), slackevents.OptionNoVerifyToken())
		if err != nil {
			return
		}
		c := open
		if useAllow {
			c = closed
		}
		in, files := c.inbound(ev)
		var user, text, channel, ts, threadTS, channelType, subtype, botID string
		switch e := ev.InnerEvent.Data.(type) {
		case *slackevents.AppMentionEvent:
			user, text, channel, ts, threadTS, botID = e.User, e.Text, e.Channel, e.TimeStamp, e.ThreadTimeStamp, e.BotID
			channelType = "channel"
		case *slackevents.MessageEvent:
			user, text, channel, ts, threadTS, botID = e.User, e.Text, e.Channel, e.TimeStamp, e.ThreadTimeStamp, e.BotID
			channelType, subtype = e.ChannelType, e.SubType
		default:
			if in != nil {
				t.Fatalf("a message from a %T event", e)
			}
			return
		}
		plain := !strings.ContainsAny(text, "<&")
		if in == nil {
			if channelType == "im" && subtype == "" && botID == "" && user != "" && user != c.botUser &&
				c.allowed(user) && plain && strings.TrimSpace(text) != "" {
				t.Fatalf("a direct message was dropped: %q from %q", text, user)
			}
			return
		}
		topic := threadTS
		if topic == "" {
			topic = ts
		}
		switch {
		case botID != "" || user == "" || user == c.botUser || subtype != "" && subtype != "file_share":
			t.Fatalf("a message from no person: user %q bot %q subtype %q", user, botID, subtype)
		case !c.allowed(user):
			t.Fatalf("a message from %q, who is not allowed", user)
		case in.Channel != Name || in.ChatID != channel || in.UserID != user || in.MessageID != ts ||
			in.Topic != topic || in.EventKey != "slack:msg:"+channel+":"+ts:
			t.Fatalf("ids changed: %+v", in)
		case in.Group != (channelType != "im"):
			t.Fatalf("group = %v for channel type %q", in.Group, channelType)
		case in.Text == "" && len(in.Files) == 0:
			t.Fatalf("an empty message: %+v", in)
		case files != (len(in.Files) > 0):
			t.Fatalf("files = %v with %d files", files, len(in.Files))
		case !strings.Contains(text, "&") && strings.Contains(in.Text, "<@"+c.botUser+">"):
			t.Fatalf("the bot's mention is left in %q", in.Text)
		case plain && in.Text != strings.TrimSpace(text):
			t.Fatalf("plain text %q became %q", text, in.Text)
		case in.Text != strings.TrimSpace(in.Text):
			t.Fatalf("text %q is not trimmed", in.Text)
		}
	})
}

// FuzzFinal builds a finished answer's messages the way final does (split
// into markdown blocks, each with a plain-text fallback) and checks what
// Slack would receive: every block within maxMarkdown bytes, every fallback
// within maxFallback and a prefix of its block, valid UTF-8 when the answer
// is, and the blocks' JSON decoding to the parts.
func FuzzFinal(f *testing.F) {
	f.Add("hello *world*")
	f.Add("```go\n" + strings.Repeat("fmt.Println(\"é\")\n", 900) + "```\n\nafter")
	f.Add(strings.Repeat("ü", 8000))
	f.Add(strings.Repeat("a", 2999) + "é" + strings.Repeat("b", 10))
	f.Add("\u202eשלום\u200d" + strings.Repeat("👨‍👩‍👧 ", 3000))
	f.Fuzz(func(t *testing.T, md string) {
		// Make small inputs large enough to be split and cut.
		for md != "" && len(md) <= maxMarkdown {
			md += "\n" + md
		}
		for i, part := range channels.SplitMarkdown(md, maxMarkdown) {
			_, v, err := slack.UnsafeApplyMsgOptions("xoxb-fuzz", "C1", "https://slack.test/api/",
				slack.MsgOptionText(cut(part, maxFallback), false))
			if err != nil {
				t.Fatal(err)
			}
			fallback := v.Get("text")
			raw, err := json.Marshal(slack.Blocks{BlockSet: []slack.Block{slack.NewMarkdownBlock("", part)}})
			if err != nil {
				t.Fatalf("part %d: blocks: %v", i, err)
			}
			var blocks []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(raw, &blocks); err != nil {
				t.Fatalf("part %d: blocks %s: %v", i, raw, err)
			}
			switch {
			case len(part) > maxMarkdown:
				t.Fatalf("part %d: %d bytes", i, len(part))
			case len(blocks) != 1 || blocks[0].Type != "markdown" || utf8.ValidString(part) && blocks[0].Text != part:
				t.Fatalf("part %d: blocks %+v", i, blocks)
			case len(fallback) > maxFallback:
				t.Fatalf("part %d: fallback has %d bytes", i, len(fallback))
			case !strings.HasPrefix(part, strings.TrimSuffix(fallback, "…")) && utf8.ValidString(part):
				t.Fatalf("part %d: fallback is not a prefix", i)
			case utf8.ValidString(md) && !utf8.ValidString(fallback):
				t.Fatalf("part %d: fallback splits a character", i)
			}
		}
	})
}

// FuzzCut checks cut: at most n bytes, the input when it fits, else a
// prefix and "…", never a split character (of valid UTF-8), never a panic
// (of invalid).
func FuzzCut(f *testing.F) {
	f.Add("hello world", uint16(5))
	f.Add("aé", uint16(4))
	f.Add(strings.Repeat("\x80", 40), uint16(10))
	f.Add("😀😀😀", uint16(6))
	f.Fuzz(func(t *testing.T, s string, n16 uint16) {
		n := 3 + int(n16)%5000
		out := cut(s, n)
		if len(s) <= n {
			if out != s {
				t.Fatalf("cut(%q, %d) = %q; it fits", s, n, out)
			}
			return
		}
		head, ok := strings.CutSuffix(out, "…")
		switch {
		case !ok || !strings.HasPrefix(s, head):
			t.Fatalf("cut(%q, %d) = %q: not a prefix and an ellipsis", s, n, out)
		case len(out) > n:
			t.Fatalf("cut(%q, %d) = %q: %d bytes", s, n, out, len(out))
		case utf8.ValidString(s) && !utf8.ValidString(out):
			t.Fatalf("cut(%q, %d) = %q: split a character", s, n, out)
		}
	})
}

// TestCut: cut returned two bytes over its limit, split the character
// before the cut, and panicked on a run of continuation bytes (found by
// FuzzCut and FuzzFinal).
func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello world", 11, "hello world"},
		{"hello world", 8, "hello…"},
		{"aébc", 4, "a…"},
		{"aéz" + "xyz", 6, "aé…"},
		{strings.Repeat("\x80", 40), 10, strings.Repeat("\x80", 4) + "…"},
		{"😀😀😀", 6, "…"},
	} {
		got := cut(tc.in, tc.n)
		if got != tc.want || len(got) > tc.n {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
