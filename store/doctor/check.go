// Package doctor is the operator's tools for a deerflow database file
// (deerflow doctor, doctor --repair, backup): Check reads all of it and
// says what is damaged, Salvage copies what can still be read into a new
// file, and Backup copies a file in use.
//
// It reads the file through package store's internal layout
// (store/internal/...); package store must not import it.
package doctor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/store/boltfile"
	"github.com/deerflow/deerflow/store/internal/dbfile"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// Problem is one thing Check found wrong, or one thing Salvage lost.
type Problem struct {
	Thread string // the thread it is about; "" if none
	Bucket string // the bucket it is in; "" for the file as a whole
	Detail string
}

func (p Problem) String() string {
	switch {
	case p.Thread != "":
		return "thread " + p.Thread + ": " + p.Detail
	case p.Bucket != "":
		return "bucket " + p.Bucket + ": " + p.Detail
	}
	return p.Detail
}

// Report is what Check found in a database file.
type Report struct {
	SchemaVersion uint64
	Threads       int // threads with a history (a sequence record)
	Problems      []Problem
}

// openReadOnly opens path for Check and Salvage: read-only, with bbolt's
// shared lock, which a running deerflow's exclusive lock refuses.
func openReadOnly(path string, timeout time.Duration) (*bbolt.DB, error) {
	if err := dbfile.Check(path, false); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var db *bbolt.DB
	err := dbfile.Guard(path, func() error {
		var err error
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: timeout})
		return err
	})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, dbfile.Locked(path, err)
	}
	return db, err
}

// Check reads the whole database at path and reports what is damaged:
// pages bbolt cannot read (by thread, or by bucket), records that do not
// decode, a missing or too new schema version, missing buckets, lost
// messages, references to records that are gone, and what bbolt's own
// consistency check finds. It only reads. The file must not be in use (see
// store.ErrLocked); check a Backup of a running one.
func Check(path string) (*Report, error) {
	db, err := openReadOnly(path, time.Second)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &Report{}
	if why := freelistDamage(path); why != "" {
		r.Problems = append(r.Problems, Problem{Detail: "the free page list is damaged (" + why + "): deerflow will not open the file until it is salvaged"})
	}
	// Damage is contained thread by thread and bucket by bucket; Guard
	// catches what is left (the root of the file).
	err = dbfile.Guard(path, func() error {
		return db.View(func(tx *bbolt.Tx) error {
			r.SchemaVersion = checkSchema(tx, &r.Problems)
			r.Threads = checkThreads(tx, &r.Problems)
			checkBuckets(tx, &r.Problems)
			checkReferences(tx, &r.Problems)
			if len(r.Problems) == 0 {
				// bbolt checks in a goroutine of its own, where a panic
				// cannot be contained: only once every page was read fine.
				for err := range tx.Check() {
					r.Problems = append(r.Problems, Problem{Detail: "bbolt: " + err.Error()})
				}
			}
			return nil
		})
	})
	r.Problems = slices.CompactFunc(r.Problems, func(a, b Problem) bool { return a == b })
	return r, err
}

// safely runs fn, turning damage into a problem about bucket and thread.
func safely(ps *[]Problem, bucket []byte, thread string, fn func() error) bool {
	err := func() (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer catch(&err)
		return fn()
	}()
	if err != nil {
		p := Problem{Thread: thread, Bucket: string(bucket), Detail: damageDetail(err)}
		if de, ok := errors.AsType[*store.DamagedError](err); ok && de.Thread != "" {
			p.Thread = de.Thread // a record met while walking a bucket
		}
		*ps = append(*ps, p)
	}
	return err == nil
}

// catch, deferred, turns a panic bbolt raised reading a damaged page into
// a *store.DamagedError. Any other panic is a bug, and goes on.
func catch(errp *error) {
	if r := recover(); r != nil {
		if !dbfile.IsDamage(r) {
			panic(r)
		}
		*errp = &store.DamagedError{Cause: fmt.Sprint(r)}
	}
}

func damageDetail(err error) string {
	var de *store.DamagedError
	if errors.As(err, &de) {
		return "unreadable (" + de.Cause + ")"
	}
	return err.Error()
}

// bucket returns a bucket every schema version has.
func bucket(tx *bbolt.Tx, name []byte) (*bbolt.Bucket, error) {
	b := tx.Bucket(name)
	if b == nil {
		return nil, fmt.Errorf("store: bucket %q missing", name)
	}
	return b, nil
}

func checkSchema(tx *bbolt.Tx, ps *[]Problem) uint64 {
	var v uint64
	safely(ps, schema.Meta, "", func() error {
		meta := tx.Bucket(schema.Meta)
		if meta == nil {
			return errors.New("no schema version: not a deerflow database")
		}
		b := meta.Get(schema.KeySchemaVersion)
		if len(b) != 8 {
			return errors.New("bad schema version record")
		}
		v = binary.BigEndian.Uint64(b)
		if v > uint64(schema.Version()) {
			return fmt.Errorf("schema version %d is newer than this deerflow's (%d)", v, schema.Version())
		}
		return nil
	})
	return v
}

// threadIDs returns the ids of the threads with a history, from the seqs
// bucket.
func threadIDs(tx *bbolt.Tx, ps *[]Problem) []string {
	var ids []string
	safely(ps, schema.Seqs, "", func() error {
		b, err := bucket(tx, schema.Seqs)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	return ids
}

// checkThreads reads every thread's record and history.
func checkThreads(tx *bbolt.Tx, ps *[]Problem) int {
	ids := threadIDs(tx, ps)
	for _, id := range ids {
		safely(ps, schema.Messages, id, func() error { return checkHistory(tx, id) })
	}
	safely(ps, schema.Threads, "", func() error {
		b, err := bucket(tx, schema.Threads)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			if err := json.Unmarshal(v, new(store.Thread)); err != nil {
				return &store.DamagedError{Thread: string(k), Bucket: string(schema.Threads), Cause: err.Error()}
			}
			return nil
		})
	})
	return len(ids)
}

// checkHistory reads thread id's messages as the store does, and checks
// them against its counter.
func checkHistory(tx *bbolt.Tx, id string) error {
	seqs, err := bucket(tx, schema.Seqs)
	if err != nil {
		return err
	}
	st := schema.GetSeqState(seqs, id)
	var msgs []rawMessage
	if st.Last > 0 {
		msgs, err = rawMessages(tx, id, st.Last)
	} else {
		_, err = bucket(tx, schema.Messages) // no seq to read
	}
	if err != nil {
		return err
	}
	if n := int(st.Count); n != len(msgs) {
		return fmt.Errorf("%d messages stored, its counter says %d", len(msgs), n)
	}
	return nil
}

// checkBuckets reports missing buckets and reads every key of the others.
// The messages bucket is read whole only when no thread's history was
// damaged (that damage is reported by thread).
func checkBuckets(tx *bbolt.Tx, ps *[]Problem) {
	threadDamage := slices.ContainsFunc(*ps, func(p Problem) bool { return p.Thread != "" })
	for _, name := range schema.Buckets() {
		b := tx.Bucket(name)
		switch {
		case b == nil:
			*ps = append(*ps, Problem{Bucket: string(name), Detail: "missing"})
		case bytes.Equal(name, schema.Messages) && threadDamage:
		default:
			safely(ps, name, "", func() error { return walk(b) })
		}
	}
}

// walk reads every key and value under b.
func walk(b *bbolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			if sub := b.Bucket(k); sub != nil {
				return walk(sub)
			}
		}
		return nil
	})
}

// checkReferences reports run index entries for runs that are gone (a
// run and its index entry are written and deleted together). A chat mapped
// to a deleted thread is not one: the HTTP API deletes threads, and the
// chat's next message starts the thread again.
func checkReferences(tx *bbolt.Tx, ps *[]Problem) {
	idx, runs := tx.Bucket(schema.RunIndex), tx.Bucket(schema.Runs)
	if idx == nil || runs == nil {
		return
	}
	safely(ps, schema.RunIndex, "", func() error {
		return idx.ForEach(func(k, _ []byte) error {
			if i := bytes.IndexByte(k, 0); i >= 0 && runs.Get(k[i+1:]) == nil {
				*ps = append(*ps, Problem{Bucket: string(schema.RunIndex), Detail: fmt.Sprintf("lists run %s, which has no record", k[i+1:])})
			}
			return nil
		})
	})
}

// freelistDamage says why the free page list of the file at path is
// damaged, or "": the rest of the layout passed openReadOnly already.
func freelistDamage(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	return boltfile.Check(f, fi.Size(), true)
}
