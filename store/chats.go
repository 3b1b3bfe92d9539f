package store

import (
	"errors"

	"github.com/deerflow/deerflow/store/internal/schema"
)

// ChatThread returns the thread a conversation is mapped to. chatKey is
// "channel:chat[:topic]". ErrNotFound if the conversation has none.
func (tx *Tx) ChatThread(chatKey string) (threadID string, err error) {
	b, err := tx.bucket(schema.Chats)
	if err != nil {
		return "", err
	}
	v := b.Get([]byte(chatKey))
	if v == nil {
		return "", ErrNotFound
	}
	return string(v), nil
}

// SetChatThread maps a conversation to a thread, replacing any earlier one.
func (tx *Tx) SetChatThread(chatKey, threadID string) error {
	if chatKey == "" || threadID == "" {
		return errors.New("store: set chat thread: empty chat key or thread id")
	}
	b, err := tx.bucket(schema.Chats)
	if err != nil {
		return err
	}
	return b.Put([]byte(chatKey), []byte(threadID))
}

// DeleteChatThread removes a conversation's mapping, if any (for /new).
func (tx *Tx) DeleteChatThread(chatKey string) error {
	b, err := tx.bucket(schema.Chats)
	if err != nil {
		return err
	}
	return b.Delete([]byte(chatKey))
}

// PutBotMessage records that the bot sent messageID into chatID on channel,
// as part of the conversation chatKey, so a reply to it finds its way back.
func (tx *Tx) PutBotMessage(channel, chatID, messageID, chatKey string) error {
	if messageID == "" || chatKey == "" {
		return errors.New("store: put bot message: empty message id or chat key")
	}
	b, err := tx.bucket(schema.BotMsgs)
	if err != nil {
		return err
	}
	return b.Put(schema.BotMsgKey(channel, chatID, messageID), []byte(chatKey))
}

// BotMessageChat returns the conversation a bot message was sent in.
// ErrNotFound if the bot never recorded it.
func (tx *Tx) BotMessageChat(channel, chatID, messageID string) (chatKey string, err error) {
	b, err := tx.bucket(schema.BotMsgs)
	if err != nil {
		return "", err
	}
	v := b.Get(schema.BotMsgKey(channel, chatID, messageID))
	if v == nil {
		return "", ErrNotFound
	}
	return string(v), nil
}
