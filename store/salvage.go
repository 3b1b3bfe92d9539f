package store

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"time"

	"go.etcd.io/bbolt"
)

// schemaBuckets are the top-level buckets of the current schema.
func schemaBuckets() [][]byte {
	names := [][]byte{bucketMeta, bucketChats, bucketBotMsgs, bucketThreads,
		bucketMessages, bucketSeqs, bucketRuns, bucketRunIndex,
		bucketState, bucketResearch, bucketAPIQueue}
	return append(names, reservedBuckets...)
}

// checkBuckets reports missing buckets and reads every key of the others.
// The messages bucket is read whole only when no thread's history was
// damaged (that damage is reported by thread).
func (tx *Tx) checkBuckets(ps *[]Problem) {
	threadDamage := slices.ContainsFunc(*ps, func(p Problem) bool { return p.Thread != "" })
	for _, name := range schemaBuckets() {
		b := tx.tx.Bucket(name)
		switch {
		case b == nil:
			*ps = append(*ps, Problem{Bucket: string(name), Detail: "missing"})
		case bytes.Equal(name, bucketMessages) && threadDamage:
		default:
			tx.safely(ps, name, "", func() error { return walk(b, nil) })
		}
	}
}

// walk reads every key and value under b, calling fn (if set) for each.
func walk(b *bbolt.Bucket, fn func(k, v []byte)) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			if sub := b.Bucket(k); sub != nil {
				return walk(sub, fn)
			}
		}
		if fn != nil {
			fn(k, v)
		}
		return nil
	})
}

// checkReferences reports run index entries for runs that are gone (a
// run and its index entry are written and deleted together). A chat mapped
// to a deleted thread is not one: the HTTP API deletes threads, and the
// chat's next message starts the thread again.
func (tx *Tx) checkReferences(ps *[]Problem) {
	idx, runs := tx.tx.Bucket(bucketRunIndex), tx.tx.Bucket(bucketRuns)
	if idx == nil || runs == nil {
		return
	}
	tx.safely(ps, bucketRunIndex, "", func() error {
		return idx.ForEach(func(k, _ []byte) error {
			if i := bytes.IndexByte(k, 0); i >= 0 && runs.Get(k[i+1:]) == nil {
				*ps = append(*ps, Problem{Bucket: string(bucketRunIndex), Detail: fmt.Sprintf("lists run %s, which has no record", k[i+1:])})
			}
			return nil
		})
	})
}

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
	err = guard(path, func() error {
		return src.View(func(stx *bbolt.Tx) error {
			return dst.Update(func(dtx *bbolt.Tx) error {
				from, to := &Tx{tx: stx}, &Tx{tx: dtx}
				return copyAll(from, to, &lost)
			})
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
func copyAll(from, to *Tx, lost *[]Problem) error {
	for _, name := range schemaBuckets() {
		dst, err := to.tx.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		src := from.tx.Bucket(name)
		if src == nil || bytes.Equal(name, bucketMessages) || bytes.Equal(name, bucketSeqs) {
			continue
		}
		if err := copyBucket(from, src, dst, name, lost); err != nil {
			return err
		}
	}
	for _, id := range from.threadIDs(lost) {
		if err := copyThread(from, to, id, lost); err != nil {
			return err
		}
	}
	return nil
}

// copyBucket copies what can be read of src (with its sub-buckets) into
// dst: a damaged page ends the copy of that bucket.
func copyBucket(from *Tx, src, dst *bbolt.Bucket, name []byte, lost *[]Problem) error {
	if err := dst.SetSequence(src.Sequence()); err != nil {
		return err
	}
	var werr error
	n := 0
	ok := from.safely(lost, name, "", func() error {
		return src.ForEach(func(k, v []byte) error {
			if v == nil {
				if sub := src.Bucket(k); sub != nil {
					d, err := dst.CreateBucketIfNotExists(k)
					if err != nil {
						werr = err
						return err
					}
					return copyBucket(from, sub, d, name, lost)
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
func copyThread(from, to *Tx, id string, lost *[]Problem) error {
	var msgs []snapMessage
	var st seqState
	ok := from.safely(lost, bucketMessages, id, func() error {
		seqs, err := from.bucket(bucketSeqs)
		if err != nil {
			return err
		}
		st = getSeqState(seqs, id)
		msgs, err = from.rawMessages(id, st.last)
		return err
	})
	if !ok {
		p := &(*lost)[len(*lost)-1]
		p.Detail = fmt.Sprintf("history lost (%d messages): %s", st.count, p.Detail)
		msgs, st.count = nil, 0 // the seqs go on: a lost seq is never reused
	}
	b, err := to.bucket(bucketMessages)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := b.Put(msgKey(id, m.seq), m.v); err != nil {
			return err
		}
	}
	seqs, err := to.bucket(bucketSeqs)
	if err != nil {
		return err
	}
	return putSeqState(seqs, id, seqState{last: st.last, count: uint64(len(msgs))})
}

// rawMessages returns copies of the stored bytes of a thread's messages up
// to seq last, as stored (fields this build does not know are kept), each
// checked to decode.
func (tx *Tx) rawMessages(id string, last uint64) ([]snapMessage, error) {
	b, err := tx.bucket(bucketMessages)
	if err != nil {
		return nil, err
	}
	var out []snapMessage
	p := msgKey(id, 0)[:len(id)+1]
	c := b.Cursor()
	for k, v := c.Seek(msgKey(id, 1)); k != nil; k, v = c.Next() {
		seq, ok := msgSeq(p, k)
		if !ok || seq > last {
			break
		}
		if _, err := decodeMessage(id, seq, v); err != nil {
			return nil, damagedRecord(bucketMessages, id, err)
		}
		out = append(out, snapMessage{seq: seq, v: slices.Clone(v)})
		if seq == last {
			break
		}
	}
	return out, nil
}
