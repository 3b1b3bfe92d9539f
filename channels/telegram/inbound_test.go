package telegram

import (
	"testing"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
)

func entity(typ models.MessageEntityType, text, word string) models.MessageEntity {
	// Offsets are in UTF-16 units, as Telegram sends them.
	units := utf16.Encode([]rune(text))
	w := utf16.Encode([]rune(word))
	for i := 0; i+len(w) <= len(units); i++ {
		if string(utf16.Decode(units[i:i+len(w)])) == word {
			return models.MessageEntity{Type: typ, Offset: i, Length: len(w)}
		}
	}
	panic("word not in text")
}

func TestAddressed(t *testing.T) {
	c := &Channel{me: &models.User{ID: 42, Username: "DeerBot", IsBot: true}}
	other := &models.User{ID: 7, Username: "ann"}
	tests := []struct {
		name     string
		text     string
		entities func(text string) []models.MessageEntity
		replyTo  *models.User
		want     bool
		cleaned  string
	}{
		{"mention", "@DeerBot what is 2+2?", func(s string) []models.MessageEntity {
			return []models.MessageEntity{entity(models.MessageEntityTypeMention, s, "@DeerBot")}
		}, nil, true, "what is 2+2?"},
		{"mention mid-text, lower case, emoji before", "🦌 hey @deerbot look", func(s string) []models.MessageEntity {
			return []models.MessageEntity{entity(models.MessageEntityTypeMention, s, "@deerbot")}
		}, nil, true, "🦌 hey look"},
		{"other mention", "@ann lunch?", func(s string) []models.MessageEntity {
			return []models.MessageEntity{entity(models.MessageEntityTypeMention, s, "@ann")}
		}, nil, false, ""},
		{"plain group chatter", "hello all", nil, nil, false, ""},
		{"reply to the bot", "and then?", nil, &models.User{ID: 42}, true, "and then?"},
		{"reply to someone else", "and then?", nil, other, false, ""},
		{"command", "/status", func(s string) []models.MessageEntity {
			return []models.MessageEntity{entity(models.MessageEntityTypeBotCommand, s, "/status")}
		}, nil, true, "/status"},
		{"command for this bot", "/models@DeerBot big", func(s string) []models.MessageEntity {
			return []models.MessageEntity{entity(models.MessageEntityTypeBotCommand, s, "/models@DeerBot")}
		}, nil, true, "/models big"},
		{"command for another bot", "/status@OtherBot", func(s string) []models.MessageEntity {
			return []models.MessageEntity{entity(models.MessageEntityTypeBotCommand, s, "/status@OtherBot")}
		}, nil, false, ""},
		{"entity out of range is ignored", "hi", func(string) []models.MessageEntity {
			return []models.MessageEntity{{Type: models.MessageEntityTypeMention, Offset: 5, Length: 9}}
		}, nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &models.Message{Text: tt.text}
			if tt.replyTo != nil {
				m.ReplyToMessage = &models.Message{ID: 1, From: tt.replyTo}
			}
			var ents []models.MessageEntity
			if tt.entities != nil {
				ents = tt.entities(tt.text)
			}
			got, cleaned := c.addressed(m, tt.text, ents)
			if got != tt.want || (got && cleaned != tt.cleaned) {
				t.Errorf("addressed = %v, %q; want %v, %q", got, cleaned, tt.want, tt.cleaned)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	c := &Channel{allow: allowSet([]string{"12345", "@Ann", " "})}
	for _, tt := range []struct {
		u    models.User
		want bool
	}{
		{models.User{ID: 12345}, true},
		{models.User{ID: 1, Username: "ann"}, true},
		{models.User{ID: 1, Username: "ANN"}, true},
		{models.User{ID: 2, Username: "bob"}, false},
		{models.User{ID: 3}, false},
	} {
		if got := c.allowed(&tt.u); got != tt.want {
			t.Errorf("allowed(%+v) = %v", tt.u, got)
		}
	}
	if open := (&Channel{}); !open.allowed(&models.User{ID: 9}) {
		t.Error("an empty allow-list must let everyone in")
	}
}

func TestCutText(t *testing.T) {
	s := "ab😀cd"
	if got := cutText(s, 4); got != "ab…" { // 😀 is two UTF-16 units and does not fit with the ellipsis
		t.Errorf("cutText = %q", got)
	}
	if got := cutText(s, 100); got != s {
		t.Errorf("cutText = %q", got)
	}
}
