package faketelegram

import (
	"encoding/json"
	"fmt"
)

// InlineButton is a button of an inline keyboard, as the bot sent it.
type InlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

// maxCallbackData is the Bot API's limit for callback_data, in bytes.
const maxCallbackData = 64

// checkKeyboard validates an inline keyboard the way the Bot API does:
// rows of buttons, each with a text and one action; callback_data of 1-64
// bytes. Other reply markups pass unchecked.
func checkKeyboard(raw []byte) *apiError {
	var m struct {
		InlineKeyboard *json.RawMessage `json:"inline_keyboard"`
	}
	if json.Unmarshal(raw, &m) != nil || m.InlineKeyboard == nil {
		return nil
	}
	var rows [][]InlineButton
	if json.Unmarshal(*m.InlineKeyboard, &rows) != nil {
		return badRequest("can't parse inline keyboard button: InlineKeyboardButton must be an Object")
	}
	for _, row := range rows {
		for _, b := range row {
			switch {
			case b.Text == "":
				return badRequest("BUTTON_TEXT_INVALID")
			case b.URL == "" && b.CallbackData == "":
				return badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
			case len(b.CallbackData) > maxCallbackData:
				return badRequest("BUTTON_DATA_INVALID")
			}
		}
	}
	return nil
}

// Keyboard returns the inline keyboard now under a message the bot sent in
// chatID (nil when it has none).
func (s *Server) Keyboard(chatID int64, messageID int) [][]InlineButton {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chats[chatID]
	if cs == nil || cs.bySent[messageID] == nil {
		return nil
	}
	var m struct {
		InlineKeyboard [][]InlineButton `json:"inline_keyboard"`
	}
	json.Unmarshal(cs.bySent[messageID].Message.ReplyMarkup, &m)
	return m.InlineKeyboard
}

// Press queues a callback_query update: from pressed the button with
// callback data under the bot's message messageID in chatID, as the
// message is now. It returns the update (its CallbackQuery.ID is what
// answerCallbackQuery must answer).
func (s *Server) Press(from User, chatID int64, messageID int, data string) Update {
	s.mu.Lock()
	cs := s.chats[chatID]
	if cs == nil || cs.bySent[messageID] == nil {
		s.mu.Unlock()
		panic(fmt.Sprintf("faketelegram: Press: the bot sent no message %d in chat %d", messageID, chatID))
	}
	m := cs.bySent[messageID].Message
	s.mu.Unlock()
	return s.Push(Update{CallbackQuery: &CallbackQuery{From: from, Message: &m, Data: data}})
}

// Answered reports the answerCallbackQuery calls for the query id: their
// text parameters, in order.
func (s *Server) Answered(queryID string) []string {
	var texts []string
	for _, c := range s.CallsOf("answerCallbackQuery") {
		if c.Params["callback_query_id"] == queryID && c.Status == 200 {
			texts = append(texts, c.Params["text"])
		}
	}
	return texts
}
