package store

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/deerflow/deerflow/store/internal/schema"
)

// PutInbound, DeleteInbound and Inbound (oldest first; data valid during
// the call) are the intake queue of deerflow before the runner, which
// router.Adopt drains into the runner's at start.
func (tx *Tx) PutInbound(data []byte) (uint64, error) { return tx.putSeq(schema.Inbound, data) }

// DeleteInbound removes a message of that queue; see PutInbound.
func (tx *Tx) DeleteInbound(seq uint64) error { return tx.deleteSeq(schema.Inbound, seq) }

// Inbound calls fn for each message of that queue; see PutInbound.
func (tx *Tx) Inbound(fn func(seq uint64, data []byte) error) error {
	return tx.forEachSeq(schema.Inbound, fn)
}

// MarkSeen records key (a platform's event or update id) and reports
// whether it had been recorded before.
func (tx *Tx) MarkSeen(key string, now time.Time) (seen bool, err error) {
	if key == "" {
		return false, errors.New("store: mark seen: empty key")
	}
	b, err := tx.bucket(schema.Dedup)
	if err != nil {
		return false, err
	}
	if b.Get([]byte(key)) != nil {
		return true, nil
	}
	return false, b.Put([]byte(key), schema.BE64(uint64(now.Unix())))
}

// Seen reports whether key was recorded by MarkSeen.
func (tx *Tx) Seen(key string) (bool, error) {
	b, err := tx.bucket(schema.Dedup)
	if err != nil {
		return false, err
	}
	return b.Get([]byte(key)) != nil, nil
}

// PruneSeen forgets keys first seen before cutoff and returns how many.
func (tx *Tx) PruneSeen(cutoff time.Time) (int, error) {
	b, err := tx.bucket(schema.Dedup)
	if err != nil {
		return 0, err
	}
	var old [][]byte
	err = b.ForEach(func(k, v []byte) error {
		if len(v) == 8 && int64(binary.BigEndian.Uint64(v)) < cutoff.Unix() {
			old = append(old, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}

// PutState stores a small value under key.
func (tx *Tx) PutState(key string, value []byte) error {
	b, err := tx.bucket(schema.State)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), value)
}

// State returns the value stored under key (a copy), or ErrNotFound.
func (tx *Tx) State(key string) ([]byte, error) {
	b, err := tx.bucket(schema.State)
	if err != nil {
		return nil, err
	}
	v := b.Get([]byte(key))
	if v == nil {
		return nil, ErrNotFound
	}
	return append([]byte(nil), v...), nil
}
