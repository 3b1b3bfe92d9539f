package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
)

// Bucket names. Each is created by a migration; an accessor never creates
// one.
var (
	bucketMeta     = []byte("meta")
	bucketChats    = []byte("chats")     // chatKey → threadID
	bucketBotMsgs  = []byte("botmsgs")   // botMsgKey(channel, chat, message) → chatKey
	bucketThreads  = []byte("threads")   // threadID → Thread JSON
	bucketMessages = []byte("messages")  // threadID 0x00 bigEndian(seq) → Message JSON
	bucketSeqs     = []byte("seqs")      // threadID → seqState
	bucketRuns     = []byte("runs")      // runID → Run JSON
	bucketRunIndex = []byte("runstatus") // status 0x00 runID → empty

	// Reserved for later features; created empty now so that those
	// features need no migration just to exist.
	reservedBuckets = [][]byte{
		[]byte("inbound"), []byte("dedup"), []byte("outbox"),
		[]byte("memory"), []byte("skills"), []byte("tasks"),
	}

	keySchemaVersion = []byte("schema_version")
)

// A migration brings the database from version i to i+1, where i is its
// index in the list. Append new ones; never edit or reorder old ones.
type migration func(*bbolt.Tx) error

var migrations = []migration{
	migrateTo1,
	migrateTo2,
	migrateTo3,
	migrateTo4,
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// migrateTo1 creates the first set of buckets.
func migrateTo1(tx *bbolt.Tx) error {
	names := [][]byte{bucketChats, bucketBotMsgs, bucketThreads,
		bucketMessages, bucketSeqs, bucketRuns, bucketRunIndex}
	for _, name := range append(names, reservedBuckets...) {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// schemaVersion reads the stored version. A file with buckets but no meta
// bucket was written by something else; one with no buckets at all is new
// (version 0).
func schemaVersion(tx *bbolt.Tx, path string) (uint64, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		foreign := tx.ForEach(func([]byte, *bbolt.Bucket) error { return errForeign })
		if foreign != nil {
			return 0, corrupt(path, "bbolt file without a deerflow schema version")
		}
		return 0, nil
	}
	v := meta.Get(keySchemaVersion)
	if len(v) != 8 {
		return 0, corrupt(path, "bad schema version record")
	}
	return binary.BigEndian.Uint64(v), nil
}

var errForeign = errors.New("foreign bucket")

// migrate runs the pending migrations in one write transaction. A database
// that is current, too new or foreign is only read.
func migrate(db *bbolt.DB, path string, migs []migration) error {
	var have uint64
	err := db.View(func(tx *bbolt.Tx) error {
		var err error
		have, err = schemaVersion(tx, path)
		return err
	})
	if err != nil {
		return err
	}
	want := uint64(len(migs))
	if have > want {
		return &openError{
			msg:  fmt.Sprintf("store: %s has schema version %d, newer than this deerflow supports (%d)", path, have, want),
			kind: ErrTooNew,
		}
	}
	if have == want {
		return nil
	}
	return db.Update(func(tx *bbolt.Tx) error {
		// have is still current: the file lock keeps other writers out.
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		for v := have; v < want; v++ {
			if err := migs[v](tx); err != nil {
				return fmt.Errorf("store: migrate %s to schema version %d: %w", path, v+1, err)
			}
		}
		return meta.Put(keySchemaVersion, binary.BigEndian.AppendUint64(nil, want))
	})
}
