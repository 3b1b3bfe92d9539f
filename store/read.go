package store

// One-call reads, each in its own read transaction. Never call them from
// inside View, Update or Batch.

// read is f's result, read in its own transaction.
func read[T any](s *Store, f func(*Tx) (T, error)) (v T, err error) {
	err = s.View(func(tx *Tx) error {
		v, err = f(tx)
		return err
	})
	return v, err
}

// ChatThread is Tx.ChatThread in its own transaction.
func (s *Store) ChatThread(chatKey string) (threadID string, err error) {
	return read(s, func(tx *Tx) (string, error) { return tx.ChatThread(chatKey) })
}

// BotMessageChat is Tx.BotMessageChat in its own transaction.
func (s *Store) BotMessageChat(channel, chatID, messageID string) (chatKey string, err error) {
	return read(s, func(tx *Tx) (string, error) { return tx.BotMessageChat(channel, chatID, messageID) })
}

// Thread is Tx.Thread in its own transaction.
func (s *Store) Thread(id string) (*Thread, error) {
	return read(s, func(tx *Tx) (*Thread, error) { return tx.Thread(id) })
}

// Messages is Tx.Messages in its own transaction.
func (s *Store) Messages(threadID string, afterSeq uint64) ([]*Message, error) {
	return read(s, func(tx *Tx) ([]*Message, error) { return tx.Messages(threadID, afterSeq) })
}

// LastMessages is Tx.LastMessages in its own transaction.
func (s *Store) LastMessages(threadID string, n int) ([]*Message, error) {
	return read(s, func(tx *Tx) ([]*Message, error) { return tx.LastMessages(threadID, n) })
}

// MessageCount is Tx.MessageCount in its own transaction.
func (s *Store) MessageCount(threadID string) (int, error) {
	return read(s, func(tx *Tx) (int, error) { return tx.MessageCount(threadID) })
}

// Run is Tx.Run in its own transaction.
func (s *Store) Run(id string) (*Run, error) {
	return read(s, func(tx *Tx) (*Run, error) { return tx.Run(id) })
}

// RunsWithStatus is Tx.RunsWithStatus in its own transaction.
func (s *Store) RunsWithStatus(st RunStatus) ([]*Run, error) {
	return read(s, func(tx *Tx) ([]*Run, error) { return tx.RunsWithStatus(st) })
}
