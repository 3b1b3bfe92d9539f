package store

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store/internal/dbfile"
)

var (
	// ErrDamaged is wrapped (by a *DamagedError) by the error of a read or
	// write that hit a damaged part of the file: a page bbolt cannot read,
	// a record that does not decode. The rest of the store goes on working.
	ErrDamaged = errors.New("store: damaged data")
	// ErrNoSpace is wrapped by the errors of Open and Health when the disk
	// holding the database is full.
	ErrNoSpace = dbfile.ErrNoSpace
	// ErrWriteFailed is wrapped by Health's error while commits fail.
	ErrWriteFailed = errors.New("store: writes fail")
)

// DamagedError says what is damaged: a thread's history, or a bucket.
type DamagedError struct {
	Thread string // the thread whose record or messages are damaged; "" if none
	Bucket string // the bucket being read when it failed
	Cause  string // what bbolt or the decoder said
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("store: %s is damaged (%s)", e.What(), e.Cause)
}

// What names the damaged part: "thread X" or "bucket Y".
func (e *DamagedError) What() string {
	if e.Thread != "" {
		return "thread " + e.Thread
	}
	if e.Bucket != "" {
		return "bucket " + e.Bucket
	}
	return "the database"
}

func (e *DamagedError) Unwrap() error { return ErrDamaged }

// catch, deferred by an accessor, turns a panic (bbolt reading a damaged
// page) or a decode error into a *DamagedError naming thread.
func (tx *Tx) catch(thread string, errp *error) {
	if r := recover(); r != nil {
		if !dbfile.IsDamage(r) {
			panic(r) // a caller's bug, not damage
		}
		*errp = &DamagedError{Thread: thread, Bucket: tx.cur, Cause: fmt.Sprint(r)}
		return
	}
	var de *DamagedError
	if *errp != nil && thread != "" && errors.As(*errp, &de) && de.Thread == "" {
		de.Thread = thread
	}
}

// damagedRecord wraps a record's decode error.
func damagedRecord(bucket []byte, thread string, err error) error {
	return &DamagedError{Thread: thread, Bucket: string(bucket), Cause: err.Error()}
}

// health is what the Store has learned about its file since Open.
type health struct {
	mu       sync.Mutex
	damaged  map[string]*DamagedError // by What()
	writeErr error                    // the last commit's failure; nil once one succeeds
}

// txGuard runs a bbolt transaction, containing the panics and memory
// faults bbolt raises on damaged pages, and notes what it learns.
func (s *Store) txGuard(write bool, fn func(*Tx) error) (err error) {
	run := s.db.View
	if write {
		run = s.db.Update
	}
	var t *Tx
	var fnErr error
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !dbfile.IsDamage(r) {
				panic(r) // a caller's bug, not damage
			}
			de := &DamagedError{Cause: fmt.Sprint(r)}
			if t != nil {
				de.Bucket = t.cur
			}
			err = de
		}
		s.note(write, err, fnErr)
	}()
	return run(func(tx *bbolt.Tx) error {
		t = &Tx{tx: tx}
		fnErr = fn(t)
		return fnErr
	})
}

// note records a transaction's outcome: damage it found, or whether a
// write's commit failed (err without fnErr) or landed.
func (s *Store) note(write bool, err, fnErr error) {
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	var de *DamagedError
	switch {
	case errors.As(err, &de):
		if h.damaged == nil {
			h.damaged = make(map[string]*DamagedError)
		}
		h.damaged[de.What()] = de
	case !write:
	case err == nil:
		h.writeErr = nil
		s.commits.Add(1)
	case fnErr == nil:
		h.writeErr = err
	}
}

// Damaged returns the damaged parts reads and writes have met since Open,
// sorted by what they name.
func (s *Store) Damaged() []*DamagedError {
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*DamagedError, 0, len(h.damaged))
	for _, de := range h.damaged {
		out = append(out, de)
	}
	slices.SortFunc(out, func(a, b *DamagedError) int { return strings.Compare(a.What(), b.What()) })
	return out
}

// MinFree is the free space below which the disk holding the database
// counts as full: Open refuses to start and Health reports it.
const MinFree = 1 << 20

// Health reports whether the store is fit for use: nil, or an error
// saying what is wrong, in words for an operator: damaged data met since
// Open (wrapping ErrDamaged; it stays until the file is repaired), a full
// disk (wrapping ErrNoSpace), or failing writes. After a failed commit it
// tries a small write, so that it turns healthy again once space returns.
func (s *Store) Health() error {
	if d := s.Damaged(); len(d) > 0 {
		names := make([]string, len(d))
		for i, de := range d {
			names[i] = de.What()
		}
		return fmt.Errorf("%w: %v in %s; run deerflow doctor", ErrDamaged, names, s.path)
	}
	if err := dbfile.CheckSpace(s.path, MinFree); err != nil {
		return err
	}
	s.health.mu.Lock()
	failing := s.health.writeErr != nil
	s.health.mu.Unlock()
	if failing {
		err := s.Update(func(tx *Tx) error { return tx.PutState("healthz", []byte("ok")) })
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrWriteFailed, s.path, err)
		}
	}
	return s.View(func(tx *Tx) error {
		_, err := tx.State("healthz")
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
}
