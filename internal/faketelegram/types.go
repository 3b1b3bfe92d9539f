package faketelegram

import (
	"encoding/json"
	"time"
)

// The Bot API objects the fake sends and receives. Field names and
// omitempty follow the real API: optional fields are absent, never null.

// User is a Telegram user or bot.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// Chat is a private chat, group, supergroup or channel. Supergroup and
// channel IDs look like -100xxxxxxxxxx; group IDs are negative.
type Chat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"` // private, group, supergroup, channel
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	IsForum   bool   `json:"is_forum,omitempty"`
}

// MessageEntity marks a span of a text or caption. Offset and Length count
// UTF-16 code units.
type MessageEntity struct {
	Type          string `json:"type"`
	Offset        int    `json:"offset"`
	Length        int    `json:"length"`
	URL           string `json:"url,omitempty"`
	Language      string `json:"language,omitempty"`
	CustomEmojiID string `json:"custom_emoji_id,omitempty"`
}

// PhotoSize is one size of a photo.
type PhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int    `json:"file_size,omitempty"`
}

// Document is a general file.
type Document struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

// Voice is a voice note (OGG Opus, recorded in the app).
type Voice struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Duration     int    `json:"duration"` // seconds
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

// Audio is a music file or other sound sent to be played as audio.
type Audio struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Duration     int    `json:"duration"` // seconds
	Performer    string `json:"performer,omitempty"`
	Title        string `json:"title,omitempty"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

// ForumTopicCreated is the service message that opens a forum topic. Real
// topic messages that reply to nothing carry it as reply_to_message.
type ForumTopicCreated struct {
	Name      string `json:"name"`
	IconColor int    `json:"icon_color"`
}

// Message is a message. ReplyMarkup is kept raw.
type Message struct {
	MessageID         int                `json:"message_id"`
	MessageThreadID   int                `json:"message_thread_id,omitempty"`
	From              *User              `json:"from,omitempty"`
	Date              int                `json:"date"`
	Chat              Chat               `json:"chat"`
	IsTopicMessage    bool               `json:"is_topic_message,omitempty"`
	ReplyToMessage    *Message           `json:"reply_to_message,omitempty"`
	EditDate          int                `json:"edit_date,omitempty"`
	Text              string             `json:"text,omitempty"`
	Entities          []MessageEntity    `json:"entities,omitempty"`
	Photo             []PhotoSize        `json:"photo,omitempty"`
	Document          *Document          `json:"document,omitempty"`
	Audio             *Audio             `json:"audio,omitempty"`
	Voice             *Voice             `json:"voice,omitempty"`
	Caption           string             `json:"caption,omitempty"`
	CaptionEntities   []MessageEntity    `json:"caption_entities,omitempty"`
	ForumTopicCreated *ForumTopicCreated `json:"forum_topic_created,omitempty"`
	ReplyMarkup       json.RawMessage    `json:"reply_markup,omitempty"`
}

// CallbackQuery is a press of an inline keyboard button.
type CallbackQuery struct {
	ID           string   `json:"id"`
	From         User     `json:"from"`
	Message      *Message `json:"message,omitempty"`
	ChatInstance string   `json:"chat_instance"`
	Data         string   `json:"data,omitempty"`
}

// Update is one incoming event.
type Update struct {
	UpdateID      int            `json:"update_id"`
	Message       *Message       `json:"message,omitempty"`
	EditedMessage *Message       `json:"edited_message,omitempty"`
	CallbackQuery *CallbackQuery `json:"callback_query,omitempty"`
}

// kind is the update's type as named in allowed_updates.
func (u *Update) kind() string {
	switch {
	case u.Message != nil:
		return "message"
	case u.EditedMessage != nil:
		return "edited_message"
	case u.CallbackQuery != nil:
		return "callback_query"
	}
	return ""
}

// BotCommand is an entry of the bot's command menu.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// File is what getFile returns.
type File struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileSize     int    `json:"file_size,omitempty"`
	FilePath     string `json:"file_path,omitempty"`
}

// Call is one Bot API request the fake answered.
type Call struct {
	Method string            // as documented, e.g. "sendMessage", whatever the case used
	Params map[string]string // form values; JSON-valued fields as their raw JSON text
	Files  []FilePart        // multipart file parts
	Status int               // HTTP status of the answer: 200, or the error_code
	Error  string            // the description of an error answer
	Time   time.Time         // when the fake answered it (for "did the bot wait out retry_after")
}

// FilePart is an uploaded multipart file part.
type FilePart struct {
	Field    string
	Filename string
	Data     []byte
}

// SentFile is a file the bot sent.
type SentFile struct {
	FileID   string
	Filename string
	Data     []byte
}

// SentMessage is the current state of a message the bot sent.
type SentMessage struct {
	MessageID int
	ThreadID  int
	Text      string // the text (or caption) parameter as last sent or edited, markup included
	ParseMode string
	PlainText string          // Text as users see it: entities parsed, trimmed
	Entities  []MessageEntity // of PlainText
	ReplyTo   int             // the message_id replied to, 0 if none
	Edits     int             // successful editMessageText calls
	Document  *SentFile
	Photo     *SentFile
	Message   Message // as the API last returned it
}

// Failure is an error answer injected with FailNext.
type Failure struct {
	Code            int    // error_code and HTTP status: 400, 403, 429, 500, ...
	Description     string // default: derived from Code ("Too Many Requests: retry after N" for 429)
	RetryAfter      int    // parameters.retry_after
	MigrateToChatID int64  // parameters.migrate_to_chat_id
	Body            string // when set, sent verbatim instead of the JSON envelope (e.g. a proxy's HTML 502 page)
}
