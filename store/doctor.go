package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/deerflow/deerflow/store/boltfile"

	"go.etcd.io/bbolt"
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
	if err := checkFileLayout(path, false); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var db *bbolt.DB
	err := guard(path, func() error {
		var err error
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: timeout})
		return err
	})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, &openError{msg: "another deerflow is using " + path, kind: ErrLocked, err: err}
	}
	return db, err
}

// Check reads the whole database at path and reports what is damaged:
// pages bbolt cannot read (by thread, or by bucket), records that do not
// decode, a missing or too new schema version, missing buckets, lost
// messages, references to records that are gone, and what bbolt's own
// consistency check finds. It only reads. The file must not be in use (see
// ErrLocked); check a Backup of a running one.
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
	// Damage is contained thread by thread and bucket by bucket; guard
	// catches what is left (the root of the file).
	err = guard(path, func() error {
		return db.View(func(btx *bbolt.Tx) error {
			tx := &Tx{tx: btx}
			r.SchemaVersion = tx.checkSchema(&r.Problems)
			r.Threads = tx.checkThreads(&r.Problems)
			tx.checkBuckets(&r.Problems)
			tx.checkReferences(&r.Problems)
			if len(r.Problems) == 0 {
				// bbolt checks in a goroutine of its own, where a panic
				// cannot be contained: only once every page was read fine.
				for err := range btx.Check() {
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
func (tx *Tx) safely(ps *[]Problem, bucket []byte, thread string, fn func() error) bool {
	err := func() (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer tx.catch(thread, &err)
		return fn()
	}()
	if err != nil {
		p := Problem{Thread: thread, Bucket: string(bucket), Detail: damageDetail(err)}
		if de, ok := errors.AsType[*DamagedError](err); ok && de.Thread != "" {
			p.Thread = de.Thread // a record met while walking a bucket
		}
		*ps = append(*ps, p)
	}
	return err == nil
}

func damageDetail(err error) string {
	var de *DamagedError
	if errors.As(err, &de) {
		return "unreadable (" + de.Cause + ")"
	}
	return err.Error()
}

func (tx *Tx) checkSchema(ps *[]Problem) uint64 {
	var v uint64
	tx.safely(ps, bucketMeta, "", func() error {
		meta := tx.tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("no schema version: not a deerflow database")
		}
		b := meta.Get(keySchemaVersion)
		if len(b) != 8 {
			return errors.New("bad schema version record")
		}
		v = binary.BigEndian.Uint64(b)
		if v > uint64(SchemaVersion()) {
			return fmt.Errorf("schema version %d is newer than this deerflow's (%d)", v, SchemaVersion())
		}
		return nil
	})
	return v
}

// threadIDs returns the ids of the threads with a history, from the seqs
// bucket.
func (tx *Tx) threadIDs(ps *[]Problem) []string {
	var ids []string
	tx.safely(ps, bucketSeqs, "", func() error {
		b, err := tx.bucket(bucketSeqs)
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
func (tx *Tx) checkThreads(ps *[]Problem) int {
	ids := tx.threadIDs(ps)
	for _, id := range ids {
		tx.safely(ps, bucketMessages, id, func() error {
			msgs, err := tx.Messages(id, 0)
			if err != nil {
				return err
			}
			if n, _ := tx.MessageCount(id); n != len(msgs) {
				return fmt.Errorf("%d messages stored, its counter says %d", len(msgs), n)
			}
			return nil
		})
	}
	tx.safely(ps, bucketThreads, "", func() error {
		return tx.Threads(func(*Thread) bool { return true })
	})
	return len(ids)
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
