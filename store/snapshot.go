package store

import (
	"errors"
	"math"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store/internal/schema"
)

// ThreadSnapshot is a thread as it stood at one moment: enough to put it
// back exactly (a rolled-back run).
//
// It holds the thread's record and sequence counter as stored, and the
// stored bytes of its messages after the record's SummarySeq. Earlier
// messages are not copied: a run never changes them. The agent loads a
// run's history with Messages(id, SummarySeq), or from its cache, which
// holds the same messages, so a repair (ReplaceMessagesFrom) starts at the
// seq of one of those messages, or just after the last one, and never at
// or below SummarySeq. A summary only moves SummarySeq forward and changes
// no message, and every other write of a run appends. A caller that
// changes messages at or below SummarySeq between SnapshotThread and
// RestoreThread loses exactness.
type ThreadSnapshot struct {
	id     string
	record []byte // the thread's record; nil if it had none
	seqs   []byte // the thread's seqs value; nil if it had none
	after  uint64 // the record's SummarySeq: msgs are the messages after it
	msgs   []snapMessage
}

type snapMessage struct {
	seq uint64
	v   []byte
}

// SnapshotThread captures thread id: its record and its sequence counter
// as stored, and its messages after the record's SummarySeq (all of them
// if it has no record). A thread that does not exist yet can be captured
// too; restoring that snapshot deletes it.
func (tx *Tx) SnapshotThread(id string) (snap *ThreadSnapshot, err error) {
	defer tx.catch(id, &err)
	if err := checkThreadID(id); err != nil {
		return nil, err
	}
	threads, err := tx.bucket(schema.Threads)
	if err != nil {
		return nil, err
	}
	seqs, err := tx.bucket(schema.Seqs)
	if err != nil {
		return nil, err
	}
	b, err := tx.bucket(schema.Messages)
	if err != nil {
		return nil, err
	}
	s := &ThreadSnapshot{id: id}
	// Values bbolt returns are valid only inside the transaction: copy.
	if v := threads.Get([]byte(id)); v != nil {
		t, err := decodeThread(id, v)
		if err != nil {
			return nil, err
		}
		s.record, s.after = slices.Clone(v), t.SummarySeq
	}
	if v := seqs.Get([]byte(id)); v != nil {
		s.seqs = slices.Clone(v)
	}
	if s.after == math.MaxUint64 {
		return s, nil
	}
	p := schema.MsgPrefix(id)
	c := b.Cursor()
	for k, v := c.Seek(schema.MsgKey(id, s.after+1)); k != nil; k, v = c.Next() {
		seq, ok := schema.MsgSeq(p, k)
		if !ok {
			break
		}
		s.msgs = append(s.msgs, snapMessage{seq, slices.Clone(v)})
	}
	return s, nil
}

// RestoreThread puts the thread back as s captured it: the record and the
// counter byte for byte, and its messages exactly as they were (messages
// added since are deleted; messages changed or deleted since are put back).
// Other threads are not touched. s stays valid and can be restored again.
func (tx *Tx) RestoreThread(s *ThreadSnapshot) error {
	if s == nil {
		return errors.New("store: restore thread: nil snapshot")
	}
	if err := checkThreadID(s.id); err != nil {
		return err
	}
	threads, err := tx.bucket(schema.Threads)
	if err != nil {
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
	// deleteMessages also rewrites the counter; it is put back below.
	if s.after < math.MaxUint64 {
		if _, err := tx.deleteMessages(s.id, s.after+1); err != nil {
			return err
		}
	}
	for _, m := range s.msgs {
		if err := b.Put(schema.MsgKey(s.id, m.seq), m.v); err != nil {
			return err
		}
	}
	if err := putOrDelete(seqs, s.id, s.seqs); err != nil {
		return err
	}
	return putOrDelete(threads, s.id, s.record)
}

// putOrDelete stores v under key id, or deletes the key when v is nil.
func putOrDelete(b *bbolt.Bucket, id string, v []byte) error {
	if v == nil {
		return b.Delete([]byte(id))
	}
	return b.Put([]byte(id), v)
}
