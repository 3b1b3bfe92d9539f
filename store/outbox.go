package store

import (
	"encoding/binary"

	"github.com/deerflow/deerflow/store/internal/schema"
)

// PutOutbox records a send before it is attempted and returns its key
// (sequence numbers grow, so the outbox replays in order).
func (tx *Tx) PutOutbox(data []byte) (uint64, error) { return tx.putSeq(schema.Outbox, data) }

// ReplaceOutbox overwrites a recorded send (a retry count, a new target).
// It does nothing when the send was already cleared.
func (tx *Tx) ReplaceOutbox(seq uint64, data []byte) error {
	b, err := tx.bucket(schema.Outbox)
	if err != nil {
		return err
	}
	if b.Get(schema.BE64(seq)) == nil {
		return nil
	}
	return b.Put(schema.BE64(seq), data)
}

// DeleteOutbox clears a send the platform confirmed (or that no longer
// matters).
func (tx *Tx) DeleteOutbox(seq uint64) error { return tx.deleteSeq(schema.Outbox, seq) }

// Outbox calls fn for every unconfirmed send, oldest first. data is only
// valid during the call.
func (tx *Tx) Outbox(fn func(seq uint64, data []byte) error) error {
	return tx.forEachSeq(schema.Outbox, fn)
}

// putSeq stores data in a queue bucket under its next sequence number.
func (tx *Tx) putSeq(name []byte, data []byte) (uint64, error) {
	b, err := tx.bucket(name)
	if err != nil {
		return 0, err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	return seq, b.Put(schema.BE64(seq), data)
}

func (tx *Tx) deleteSeq(name []byte, seq uint64) error {
	b, err := tx.bucket(name)
	if err != nil {
		return err
	}
	return b.Delete(schema.BE64(seq))
}

// forEachSeq calls fn for a queue bucket's entries in sequence order.
func (tx *Tx) forEachSeq(name []byte, fn func(seq uint64, data []byte) error) error {
	b, err := tx.bucket(name)
	if err != nil {
		return err
	}
	return b.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return nil
		}
		return fn(binary.BigEndian.Uint64(k), v)
	})
}
