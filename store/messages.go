package store

import (
	"encoding/binary"
	"math"
	"slices"
	"time"

	"go.etcd.io/bbolt"
)

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"` // JSON text, as the model sent it
}

// Message is one entry of a thread's history.
type Message struct {
	// Seq orders a thread's messages. AppendMessages assigns it: 1, 2, …
	// per thread, never reused, even after the last messages are deleted.
	Seq        uint64     `json:"-"`
	Role       string     `json:"role"` // system|user|assistant|tool
	Content    string     `json:"content,omitempty"`
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	RunID      string     `json:"run_id,omitempty"`
	// Hidden messages go to the model but are never shown to users:
	// synthetic repairs, injected instructions.
	Hidden bool      `json:"hidden,omitempty"`
	Time   time.Time `json:"time,omitzero"`
}

// A message key is threadID 0x00 bigEndian(seq): byte order is thread, then
// seq order, and a thread's keys are contiguous. Thread ids hold no NUL.
func msgKey(threadID string, seq uint64) []byte {
	k := make([]byte, 0, len(threadID)+9)
	k = append(k, threadID...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

// msgSeq returns the seq of key k if k belongs to the thread with prefix p.
func msgSeq(p, k []byte) (uint64, bool) {
	if len(k) != len(p)+8 || string(k[:len(p)]) != string(p) {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[len(p):]), true
}

// seqState is a thread's record in the seqs bucket: the last seq assigned
// and the number of messages stored, 8 bytes big-endian each.
type seqState struct{ last, count uint64 }

func getSeqState(b *bbolt.Bucket, threadID string) seqState {
	v := b.Get([]byte(threadID))
	if len(v) != 16 {
		return seqState{}
	}
	return seqState{binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])}
}

func putSeqState(b *bbolt.Bucket, threadID string, s seqState) error {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), s.last)
	return b.Put([]byte(threadID), binary.BigEndian.AppendUint64(v, s.count))
}

// AppendMessages stores msgs at the end of a thread's history, setting each
// one's Seq. The thread's record need not exist.
func (tx *Tx) AppendMessages(threadID string, msgs ...*Message) (err error) {
	defer tx.catch(threadID, &err)
	if err := checkThreadID(threadID); err != nil {
		return err
	}
	seqs, err := tx.bucket(bucketSeqs)
	if err != nil {
		return err
	}
	b, err := tx.bucket(bucketMessages)
	if err != nil {
		return err
	}
	st := getSeqState(seqs, threadID)
	for _, m := range msgs {
		v := encodeMessage(m)
		st.last++
		st.count++
		if err := b.Put(msgKey(threadID, st.last), v); err != nil {
			return err
		}
		m.Seq = st.last
	}
	return putSeqState(seqs, threadID, st)
}

// Messages returns a thread's messages with Seq > afterSeq, oldest first.
// A damaged page or record of the thread's is an error wrapping ErrDamaged.
func (tx *Tx) Messages(threadID string, afterSeq uint64) (out []*Message, err error) {
	defer tx.catch(threadID, &err)
	seqs, err := tx.bucket(bucketSeqs)
	if err != nil {
		return nil, err
	}
	b, err := tx.bucket(bucketMessages)
	if err != nil {
		return nil, err
	}
	// The read stops at the last seq rather than at the next thread's
	// first key: a damaged page of a neighbour is never touched.
	last := getSeqState(seqs, threadID).last
	if afterSeq >= last {
		return nil, nil
	}
	p := msgKey(threadID, 0)[:len(threadID)+1]
	c := b.Cursor()
	for k, v := c.Seek(msgKey(threadID, afterSeq+1)); k != nil; k, v = c.Next() {
		seq, ok := msgSeq(p, k)
		if !ok {
			break
		}
		m, err := decodeMessage(threadID, seq, v)
		if err != nil {
			return nil, damagedRecord(bucketMessages, threadID, err)
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
	seqs, err := tx.bucket(bucketSeqs)
	if err != nil {
		return err
	}
	b, err := tx.bucket(bucketMessages)
	if err != nil {
		return err
	}
	st := getSeqState(seqs, threadID)
	if st.count == 0 {
		return nil
	}
	p := msgKey(threadID, 0)[:len(threadID)+1]
	// The thread's last key is usually its last seq's; when that was
	// deleted, the key before the first one after it. Either way the
	// read starts inside the thread, off a neighbour's pages.
	lastKey := msgKey(threadID, st.last)
	c := b.Cursor()
	k, v := c.Seek(lastKey)
	if k == nil {
		k, v = c.Last()
	} else if string(k) != string(lastKey) {
		k, v = c.Prev()
	}
	for ; k != nil; k, v = c.Prev() {
		seq, ok := msgSeq(p, k)
		if !ok {
			return nil
		}
		m, err := decodeMessage(threadID, seq, v)
		if err != nil {
			return damagedRecord(bucketMessages, threadID, err)
		}
		if !fn(m) {
			return nil
		}
	}
	return nil
}

// MessageCount returns how many messages a thread has.
func (tx *Tx) MessageCount(threadID string) (int, error) {
	seqs, err := tx.bucket(bucketSeqs)
	if err != nil {
		return 0, err
	}
	return int(getSeqState(seqs, threadID).count), nil
}

// LastSeq returns the last seq assigned in a thread (0 if none), even if that
// message has since been deleted. The next message gets LastSeq+1.
func (tx *Tx) LastSeq(threadID string) (uint64, error) {
	seqs, err := tx.bucket(bucketSeqs)
	if err != nil {
		return 0, err
	}
	return getSeqState(seqs, threadID).last, nil
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
	b, err := tx.bucket(bucketMessages)
	if err != nil {
		return 0, err
	}
	seqs, err := tx.bucket(bucketSeqs)
	if err != nil {
		return 0, err
	}
	p := msgKey(threadID, 0)[:len(threadID)+1]
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(msgKey(threadID, fromSeq)); k != nil; k, _ = c.Next() {
		if _, ok := msgSeq(p, k); !ok {
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
	st := getSeqState(seqs, threadID)
	st.count -= min(st.count, uint64(len(keys)))
	return len(keys), putSeqState(seqs, threadID, st)
}
