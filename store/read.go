package store

// One-call reads, each in its own read transaction. Never call them from
// inside View, Update or Batch.

// ChatThread is Tx.ChatThread in its own transaction.
func (s *Store) ChatThread(chatKey string) (threadID string, err error) {
	err = s.View(func(tx *Tx) error {
		threadID, err = tx.ChatThread(chatKey)
		return err
	})
	return threadID, err
}

// BotMessageChat is Tx.BotMessageChat in its own transaction.
func (s *Store) BotMessageChat(channel, chatID, messageID string) (chatKey string, err error) {
	err = s.View(func(tx *Tx) error {
		chatKey, err = tx.BotMessageChat(channel, chatID, messageID)
		return err
	})
	return chatKey, err
}

// Thread is Tx.Thread in its own transaction.
func (s *Store) Thread(id string) (t *Thread, err error) {
	err = s.View(func(tx *Tx) error {
		t, err = tx.Thread(id)
		return err
	})
	return t, err
}

// Messages is Tx.Messages in its own transaction.
func (s *Store) Messages(threadID string, afterSeq uint64) (msgs []*Message, err error) {
	err = s.View(func(tx *Tx) error {
		msgs, err = tx.Messages(threadID, afterSeq)
		return err
	})
	return msgs, err
}

// LastMessages is Tx.LastMessages in its own transaction.
func (s *Store) LastMessages(threadID string, n int) (msgs []*Message, err error) {
	err = s.View(func(tx *Tx) error {
		msgs, err = tx.LastMessages(threadID, n)
		return err
	})
	return msgs, err
}

// MessageCount is Tx.MessageCount in its own transaction.
func (s *Store) MessageCount(threadID string) (n int, err error) {
	err = s.View(func(tx *Tx) error {
		n, err = tx.MessageCount(threadID)
		return err
	})
	return n, err
}

// Run is Tx.Run in its own transaction.
func (s *Store) Run(id string) (r *Run, err error) {
	err = s.View(func(tx *Tx) error {
		r, err = tx.Run(id)
		return err
	})
	return r, err
}

// RunsWithStatus is Tx.RunsWithStatus in its own transaction.
func (s *Store) RunsWithStatus(st RunStatus) (runs []*Run, err error) {
	err = s.View(func(tx *Tx) error {
		runs, err = tx.RunsWithStatus(st)
		return err
	})
	return runs, err
}
