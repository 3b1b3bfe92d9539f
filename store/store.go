// Package store is deerflow's persistence: one bbolt file, deerflow.db, in
// the data directory, with a typed accessor for each bucket (chat → thread
// map, bot message ids, threads, messages, runs).
//
// Reads and writes go through a *Tx inside Store.View, Store.Update or
// Store.Batch, so a caller can group several accessors in one transaction
// (for example, append a message and update its run). The one-call helpers on
// *Store each open their own read transaction: never call them from inside a
// transaction, since bbolt can deadlock on a nested transaction.
//
// Values read out of a transaction are always copies; they stay valid after
// it ends. Never make a network or model call while a transaction is open.
//
// A damaged file degrades to its damaged part: a read or write that meets a
// page bbolt cannot read (bbolt panics on those) or a record that does not
// decode returns a *DamagedError (ErrDamaged) naming the thread or bucket,
// and Health reports it. The operator's tools (doctor, repair, backup) are
// in store/doctor, which imports store, never the reverse; store imports
// only its own store/internal/... packages.
package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store/internal/dbfile"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// FileName is the name of the database file inside the data directory.
const FileName = "deerflow.db"

var (
	// ErrLocked is wrapped by the error Open returns when another process
	// (or another Store in this one) holds the database file.
	ErrLocked = dbfile.ErrLocked
	// ErrNotFound is returned by lookups of a key that does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrCorrupt is wrapped by the error Open returns when the file is not
	// a readable deerflow database. The file is left untouched.
	ErrCorrupt = dbfile.ErrCorrupt
	// ErrTooNew is wrapped by the error Open returns when the file was
	// written by a newer deerflow with a schema this one does not know.
	ErrTooNew = errors.New("store: schema version too new")
)

// Options configures Open. The zero value is ready to use.
type Options struct {
	// Timeout is how long Open waits for the file lock held by another
	// deerflow. 0 means 1 s.
	Timeout time.Duration
	// NoSync skips fsync on commit. A crash can then lose or corrupt recent
	// commits: for tests and benchmarks only.
	NoSync bool
}

// Store is an open deerflow database. It is safe for concurrent use.
type Store struct {
	db      *bbolt.DB
	path    string
	batch   batcher
	health  health
	commits atomic.Uint64 // write transactions committed (Stats)
}

// Tx is one bbolt transaction seen through deerflow's accessors. It is valid
// only inside the function it was passed to.
type Tx struct {
	tx  *bbolt.Tx
	cur string // the bucket last opened, named in a *DamagedError
}

// Open opens or creates the database at path, creating its directory (0700)
// and the file (0600) if needed, and brings its schema up to date.
func Open(path string, o Options) (*Store, error) {
	return open(path, o, schema.Migrations)
}

func open(path string, o Options, migs []schema.Migration) (*Store, error) {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := dbfile.Check(path, true); err != nil {
		return nil, err
	}
	if err := dbfile.CheckSpace(path, MinFree); err != nil {
		return nil, err
	}
	db, err := openBolt(path, o)
	if err != nil {
		return nil, err
	}
	if err := dbfile.Guard(path, func() error { return migrate(db, path, migs) }); err != nil {
		db.Close()
		if errors.Is(err, syscall.ENOSPC) {
			return nil, fmt.Errorf("%w: %s: %w", ErrNoSpace, path, err)
		}
		return nil, err
	}
	return &Store{db: db, path: path}, nil
}

// openBolt opens the file with bbolt, mapping its errors (and panics, which
// bbolt raises on some damaged files) to ours.
func openBolt(path string, o Options) (*bbolt.DB, error) {
	var f *os.File
	var db *bbolt.DB
	err := dbfile.Guard(path, func() error {
		var err error
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{
			Timeout: o.Timeout,
			NoSync:  o.NoSync,
			OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
				var err error
				f, err = os.OpenFile(name, flag, mode)
				return f, err
			},
		})
		return err
	})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, bbolt.ErrTimeout):
		return nil, dbfile.Locked(path, err)
	case errors.Is(err, ErrCorrupt):
		if f != nil {
			f.Close() // bbolt panicked with the file open and locked
		}
		return nil, err
	case errors.Is(err, bbolt.ErrInvalid), errors.Is(err, bbolt.ErrChecksum),
		errors.Is(err, bbolt.ErrVersionMismatch):
		return nil, dbfile.Corrupt(path, err.Error())
	case errors.Is(err, syscall.ENOSPC):
		return nil, fmt.Errorf("%w: open %s: %w", ErrNoSpace, path, err)
	default:
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
}

// Close closes the database. Transactions still running block it.
func (s *Store) Close() error { return s.db.Close() }

// Path returns the path the Store was opened with.
func (s *Store) Path() string { return s.path }

// Update runs fn in one write transaction, committed if fn returns nil.
// A damaged page it meets is an error wrapping ErrDamaged, not a panic.
func (s *Store) Update(fn func(*Tx) error) error {
	return s.txGuard(true, fn)
}

// View runs fn in a read-only transaction. A damaged page it meets is an
// error wrapping ErrDamaged, not a panic.
func (s *Store) View(fn func(*Tx) error) error {
	return s.txGuard(false, fn)
}

// bucket returns a bucket every schema version has; a missing one means the
// file was damaged behind our back.
func (tx *Tx) bucket(name []byte) (*bbolt.Bucket, error) {
	tx.cur = string(name)
	b := tx.tx.Bucket(name)
	if b == nil {
		return nil, fmt.Errorf("store: bucket %q missing", name)
	}
	return b, nil
}
