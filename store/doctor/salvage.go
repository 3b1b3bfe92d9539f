package doctor

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/store/internal/codec"
	"github.com/deerflow/deerflow/store/internal/dbfile"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// Salvage writes to out (which must not exist) a new database holding
// everything of the one at path that can still be read, and returns what
// could not be: each thread whose history is damaged (its messages are
// left out, its record and chat kept, so the chat goes on with an empty
// history) and each bucket that could be read only in part. The file at
// path is only read, and must not be in use.
func Salvage(path, out string) ([]Problem, error) {
	src, err := openReadOnly(path, time.Second)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if _, err := os.Stat(out); err == nil {
		return nil, fmt.Errorf("store: %s already exists", out)
	}
	dst, err := bbolt.Open(out, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var lost []Problem
	err = dbfile.Guard(path, func() error {
		return src.View(func(from *bbolt.Tx) error {
			return dst.Update(func(to *bbolt.Tx) error { return copyAll(from, to, &lost) })
		})
	})
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
		return nil, fmt.Errorf("store: salvage %s: %w", path, err)
	}
	return lost, nil
}

// copyAll copies every bucket but the messages, then each readable
// thread's messages and sequence record.
func copyAll(from, to *bbolt.Tx, lost *[]Problem) error {
	for _, name := range schema.Buckets() {
		dst, err := to.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		src := from.Bucket(name)
		if src == nil || bytes.Equal(name, schema.Messages) || bytes.Equal(name, schema.Seqs) {
			continue
		}
		if err := copyBucket(src, dst, name, lost); err != nil {
			return err
		}
	}
	for _, id := range threadIDs(from, lost) {
		if err := copyThread(from, to, id, lost); err != nil {
			return err
		}
	}
	return nil
}

// copyBucket copies what can be read of src (with its sub-buckets) into
// dst: a damaged page ends the copy of that bucket.
func copyBucket(src, dst *bbolt.Bucket, name []byte, lost *[]Problem) error {
	if err := dst.SetSequence(src.Sequence()); err != nil {
		return err
	}
	var werr error
	n := 0
	ok := safely(lost, name, "", func() error {
		return src.ForEach(func(k, v []byte) error {
			if v == nil {
				if sub := src.Bucket(k); sub != nil {
					d, err := dst.CreateBucketIfNotExists(k)
					if err != nil {
						werr = err
						return err
					}
					return copyBucket(sub, d, name, lost)
				}
			}
			n++
			if werr = dst.Put(slices.Clone(k), slices.Clone(v)); werr != nil {
				return werr
			}
			return nil
		})
	})
	if !ok {
		p := &(*lost)[len(*lost)-1]
		p.Detail = fmt.Sprintf("%s; kept the %d entries before it", p.Detail, n)
	}
	return werr
}

// copyThread copies a thread's messages and sequence record, or, if they
// cannot all be read, reports the thread lost and copies only its last seq.
func copyThread(from, to *bbolt.Tx, id string, lost *[]Problem) error {
	var msgs []rawMessage
	var st schema.SeqState
	ok := safely(lost, schema.Messages, id, func() error {
		seqs, err := bucket(from, schema.Seqs)
		if err != nil {
			return err
		}
		st = schema.GetSeqState(seqs, id)
		msgs, err = rawMessages(from, id, st.Last)
		return err
	})
	if !ok {
		p := &(*lost)[len(*lost)-1]
		p.Detail = fmt.Sprintf("history lost (%d messages): %s", st.Count, p.Detail)
		msgs, st.Count = nil, 0 // the seqs go on: a lost seq is never reused
	}
	b, err := bucket(to, schema.Messages)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := b.Put(schema.MsgKey(id, m.seq), m.v); err != nil {
			return err
		}
	}
	seqs, err := bucket(to, schema.Seqs)
	if err != nil {
		return err
	}
	return schema.PutSeqState(seqs, id, schema.SeqState{Last: st.Last, Count: uint64(len(msgs))})
}

// rawMessage is a message's stored bytes.
type rawMessage struct {
	seq uint64
	v   []byte
}

// rawMessages returns copies of the stored bytes of a thread's messages up
// to seq last, as stored (fields this build does not know are kept), each
// checked to decode.
func rawMessages(tx *bbolt.Tx, id string, last uint64) ([]rawMessage, error) {
	b, err := bucket(tx, schema.Messages)
	if err != nil {
		return nil, err
	}
	var out []rawMessage
	p := schema.MsgPrefix(id)
	c := b.Cursor()
	for k, v := c.Seek(schema.MsgKey(id, 1)); k != nil; k, v = c.Next() {
		seq, ok := schema.MsgSeq(p, k)
		if !ok || seq > last {
			break
		}
		if _, err := codec.Decode(id, seq, v); err != nil {
			return nil, &store.DamagedError{Thread: id, Bucket: string(schema.Messages), Cause: err.Error()}
		}
		out = append(out, rawMessage{seq: seq, v: slices.Clone(v)})
		if seq == last {
			break
		}
	}
	return out, nil
}
