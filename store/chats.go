package store

import (
	"encoding/binary"
	"errors"
)

// ChatThread returns the thread a conversation is mapped to. chatKey is
// "channel:chat[:topic]". ErrNotFound if the conversation has none.
func (tx *Tx) ChatThread(chatKey string) (threadID string, err error) {
	b, err := tx.bucket(bucketChats)
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
	b, err := tx.bucket(bucketChats)
	if err != nil {
		return err
	}
	return b.Put([]byte(chatKey), []byte(threadID))
}

// DeleteChatThread removes a conversation's mapping, if any (for /new).
func (tx *Tx) DeleteChatThread(chatKey string) error {
	b, err := tx.bucket(bucketChats)
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
	b, err := tx.bucket(bucketBotMsgs)
	if err != nil {
		return err
	}
	return b.Put(botMsgKey(channel, chatID, messageID), []byte(chatKey))
}

// BotMessageChat returns the conversation a bot message was sent in.
// ErrNotFound if the bot never recorded it.
func (tx *Tx) BotMessageChat(channel, chatID, messageID string) (chatKey string, err error) {
	b, err := tx.bucket(bucketBotMsgs)
	if err != nil {
		return "", err
	}
	v := b.Get(botMsgKey(channel, chatID, messageID))
	if v == nil {
		return "", ErrNotFound
	}
	return string(v), nil
}

// botMsgKey length-prefixes channel and chat so that no id, whatever bytes
// it holds, can make two keys collide, and a chat's keys stay contiguous.
func botMsgKey(channel, chatID, messageID string) []byte {
	k := make([]byte, 0, 2*binary.MaxVarintLen64+len(channel)+len(chatID)+len(messageID))
	k = binary.AppendUvarint(k, uint64(len(channel)))
	k = append(k, channel...)
	k = binary.AppendUvarint(k, uint64(len(chatID)))
	k = append(k, chatID...)
	return append(k, messageID...)
}
