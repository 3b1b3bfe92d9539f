package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store/internal/dbfile"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// The buckets, their keys and the migrations that create them are in
// package store/internal/schema.

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return schema.Version() }

// schemaVersion reads the stored version. A file with buckets but no meta
// bucket was written by something else; one with no buckets at all is new
// (version 0).
func schemaVersion(tx *bbolt.Tx, path string) (uint64, error) {
	meta := tx.Bucket(schema.Meta)
	if meta == nil {
		foreign := tx.ForEach(func([]byte, *bbolt.Bucket) error { return errForeign })
		if foreign != nil {
			return 0, dbfile.Corrupt(path, "bbolt file without a deerflow schema version")
		}
		return 0, nil
	}
	v := meta.Get(schema.KeySchemaVersion)
	if len(v) != 8 {
		return 0, dbfile.Corrupt(path, "bad schema version record")
	}
	return binary.BigEndian.Uint64(v), nil
}

var errForeign = errors.New("foreign bucket")

// migrate runs the pending migrations in one write transaction. A database
// that is current, too new or foreign is only read.
func migrate(db *bbolt.DB, path string, migs []schema.Migration) error {
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
		return &dbfile.OpenError{
			Msg:  fmt.Sprintf("store: %s has schema version %d, newer than this deerflow supports (%d)", path, have, want),
			Kind: ErrTooNew,
		}
	}
	if have == want {
		return nil
	}
	return db.Update(func(tx *bbolt.Tx) error {
		// have is still current: the file lock keeps other writers out.
		meta, err := tx.CreateBucketIfNotExists(schema.Meta)
		if err != nil {
			return err
		}
		for v := have; v < want; v++ {
			if err := migs[v](tx); err != nil {
				return fmt.Errorf("store: migrate %s to schema version %d: %w", path, v+1, err)
			}
		}
		return meta.Put(schema.KeySchemaVersion, binary.BigEndian.AppendUint64(nil, want))
	})
}
