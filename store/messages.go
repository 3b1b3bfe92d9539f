package store

import (
	"math"
	"slices"

	"github.com/deerflow/deerflow/store/internal/codec"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// ToolCall is one tool invocation requested by the model.
type ToolCall = codec.ToolCall

// Message is one entry of a thread's history. Its fields are documented in
// store/internal/codec, which encodes it.
type Message = codec.Message

// AppendMessages stores msgs at the end of a thread's history, setting each
// one's Seq. The thread's record need not exist.
func (tx *Tx) AppendMessages(threadID string, msgs ...*Message) (err error) {
	defer tx.catch(threadID, &err)
	if err := checkThreadID(threadID); err != nil {
		return err
	}
	seqs, err := tx.bucket(schema.Seqs)
	if err != nil {
		return err
	}
	b, err := tx.bucket(schema.Messages)
	if err != nil {
		return err
	}
	st := schema.GetSeqState(seqs, threadID)
	for _, m := range msgs {
		v := codec.Encode(m)
		st.Last++
		st.Count++
		if err := b.Put(schema.MsgKey(threadID, st.Last), v); err != nil {
			return err
		}
		m.Seq = st.Last
	}
	return schema.PutSeqState(seqs, threadID, st)
}

// Messages returns a thread's messages with Seq > afterSeq, oldest first.
// A damaged page or record of the thread's is an error wrapping ErrDamaged.
func (tx *Tx) Messages(threadID string, afterSeq uint64) (out []*Message, err error) {
	defer tx.catch(threadID, &err)
	seqs, err := tx.bucket(schema.Seqs)
	if err != nil {
		return nil, err
	}
	b, err := tx.bucket(schema.Messages)
	if err != nil {
		return nil, err
	}
	// The read stops at the last seq rather than at the next thread's
	// first key: a damaged page of a neighbour is never touched.
	last := schema.GetSeqState(seqs, threadID).Last
	if afterSeq >= last {
		return nil, nil
	}
	p := schema.MsgPrefix(threadID)
	c := b.Cursor()
	for k, v := c.Seek(schema.MsgKey(threadID, afterSeq+1)); k != nil; k, v = c.Next() {
		seq, ok := schema.MsgSeq(p, k)
		if !ok {
			break
		}
		m, err := codec.Decode(threadID, seq, v)
		if err != nil {
			return nil, damagedRecord(schema.Messages, threadID, err)
		}
		out = append(out, m)
		if seq >= last {
			break
		}
	}
	return out, nil
}

// LastMessages returns a thread's last n messages, oldest first.
func (tx *Tx) LastMessages(threadID string, n int) ([]*Message, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []*Message
	err := tx.messagesBackward(threadID, func(m *Message) bool {
		out = append(out, m)
		return len(out) < n
	})
	slices.Reverse(out)
	return out, err
}

// LastMessage returns the thread's newest message for which match is
// true, or ErrNotFound.
func (tx *Tx) LastMessage(threadID string, match func(*Message) bool) (*Message, error) {
	var found *Message
	err := tx.messagesBackward(threadID, func(m *Message) bool {
		if match(m) {
			found = m
			return false
		}
		return true
	})
	if err == nil && found == nil {
		err = ErrNotFound
	}
	return found, err
}

// messagesBackward calls fn with a thread's messages, newest first, while
// it returns true.
func (tx *Tx) messagesBackward(threadID string, fn func(*Message) bool) (err error) {
	defer tx.catch(threadID, &err)
	seqs, err := tx.bucket(schema.Seqs)
	if err != nil {
		return err
	}
	b, err := tx.bucket(schema.Messages)
	if err != nil {
		return err
	}
	st := schema.GetSeqState(seqs, threadID)
	if st.Count == 0 {
		return nil
	}
	p := schema.MsgPrefix(threadID)
	// The thread's last key is usually its last seq's; when that was
	// deleted, the key before the first one after it. Either way the
	// read starts inside the thread, off a neighbour's pages.
	lastKey := schema.MsgKey(threadID, st.Last)
	c := b.Cursor()
	k, v := c.Seek(lastKey)
	if k == nil {
		k, v = c.Last()
	} else if string(k) != string(lastKey) {
		k, v = c.Prev()
	}
	for ; k != nil; k, v = c.Prev() {
		seq, ok := schema.MsgSeq(p, k)
		if !ok {
			return nil
		}
		m, err := codec.Decode(threadID, seq, v)
		if err != nil {
			return damagedRecord(schema.Messages, threadID, err)
		}
		if !fn(m) {
			return nil
		}
	}
	return nil
}

// MessageCount returns how many messages a thread has.
func (tx *Tx) MessageCount(threadID string) (int, error) {
	seqs, err := tx.bucket(schema.Seqs)
	if err != nil {
		return 0, err
	}
	return int(schema.GetSeqState(seqs, threadID).Count), nil
}

// LastSeq returns the last seq assigned in a thread (0 if none), even if that
// message has since been deleted. The next message gets LastSeq+1.
func (tx *Tx) LastSeq(threadID string) (uint64, error) {
	seqs, err := tx.bucket(schema.Seqs)
	if err != nil {
		return 0, err
	}
	return schema.GetSeqState(seqs, threadID).Last, nil
}

// ReplaceMessagesFrom deletes a thread's messages with Seq >= fromSeq, then
// appends msgs with fresh seqs. It is how history is repaired.
func (tx *Tx) ReplaceMessagesFrom(threadID string, fromSeq uint64, msgs ...*Message) error {
	if err := checkThreadID(threadID); err != nil {
		return err
	}
	if _, err := tx.deleteMessages(threadID, fromSeq); err != nil {
		return err
	}
	return tx.AppendMessages(threadID, msgs...)
}

// TruncateMessagesAfter deletes a thread's messages with Seq > seq, to roll
// back a run. Their seqs are not reused.
func (tx *Tx) TruncateMessagesAfter(threadID string, seq uint64) error {
	if err := checkThreadID(threadID); err != nil {
		return err
	}
	if seq == math.MaxUint64 {
		return nil
	}
	_, err := tx.deleteMessages(threadID, seq+1)
	return err
}

// deleteMessages deletes a thread's messages with Seq >= fromSeq and returns
// how many it deleted. Keys are collected first: deleting under a cursor
// can skip keys.
func (tx *Tx) deleteMessages(threadID string, fromSeq uint64) (n int, err error) {
	defer tx.catch(threadID, &err)
	b, err := tx.bucket(schema.Messages)
	if err != nil {
		return 0, err
	}
	seqs, err := tx.bucket(schema.Seqs)
	if err != nil {
		return 0, err
	}
	p := schema.MsgPrefix(threadID)
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(schema.MsgKey(threadID, fromSeq)); k != nil; k, _ = c.Next() {
		if _, ok := schema.MsgSeq(p, k); !ok {
			break
		}
		keys = append(keys, slices.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	st := schema.GetSeqState(seqs, threadID)
	st.Count -= min(st.Count, uint64(len(keys)))
	return len(keys), schema.PutSeqState(seqs, threadID, st)
}
