package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store/internal/codec"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// RunStatus is where a run stands.
type RunStatus string

const (
	RunRunning     RunStatus = "running"
	RunDone        RunStatus = "done"
	RunError       RunStatus = "error"
	RunCancelled   RunStatus = "cancelled"
	RunInterrupted RunStatus = "interrupted" // found running after a restart
)

// Run is one agent turn on a thread: from a user message to the final
// answer. Runs left "running" by a crash are found at startup with
// RunsWithStatus.
type Run struct {
	ID               string    `json:"id"`
	ThreadID         string    `json:"thread_id,omitempty"`
	ChatKey          string    `json:"chat_key,omitempty"`
	Model            string    `json:"model,omitempty"`
	Status           RunStatus `json:"status"`
	Started          time.Time `json:"started,omitzero"`
	Ended            time.Time `json:"ended,omitzero"`
	Error            string    `json:"error,omitempty"`
	Turns            int       `json:"turns,omitempty"`
	PromptTokens     int       `json:"prompt_tokens,omitempty"`
	CompletionTokens int       `json:"completion_tokens,omitempty"`
	FirstSeq         uint64    `json:"first_seq,omitempty"` // seq of the run's first message
	// MessageID is the platform id of the message the run answers, and
	// UserID (channel:user) who sent it.
	MessageID string `json:"message_id,omitempty"`
	UserID    string `json:"user_id,omitempty"`
}

// PutRun creates or replaces a run's record and keeps the status index in
// step. The index holds only the runs still running: an ended run leaves
// it, so that it stays as small as the work under way and recording a run
// does not rewrite a page of an index that grows with every run (a fifth
// of a turn's allocations, BenchmarkTurnOverhead).
func (tx *Tx) PutRun(r *Run) error {
	if r.ID == "" {
		return errors.New("store: put run: empty id")
	}
	b, err := tx.bucket(schema.Runs)
	if err != nil {
		return err
	}
	idx, err := tx.bucket(schema.RunIndex)
	if err != nil {
		return err
	}
	id := []byte(r.ID)
	v, err := codec.JSON(r)
	if err != nil {
		return fmt.Errorf("store: put run %s: %w", r.ID, err)
	}
	if old := b.Get(id); old != nil {
		var prev struct {
			Status RunStatus `json:"status"`
		}
		if err := json.Unmarshal(old, &prev); err != nil {
			return fmt.Errorf("store: run %s: %w", r.ID, err)
		}
		if prev.Status == r.Status {
			// The common update (tokens, turns): leave the index page
			// clean, which saves a page write at commit.
			return b.Put(id, v)
		}
		if err := idx.Delete(schema.RunIndexKey(string(prev.Status), r.ID)); err != nil {
			return err
		}
	}
	if err := b.Put(id, v); err != nil || r.Status != RunRunning {
		return err
	}
	return idx.Put(schema.RunIndexKey(string(r.Status), r.ID), nil)
}

// Run returns a run's record, or ErrNotFound.
func (tx *Tx) Run(id string) (*Run, error) {
	b, err := tx.bucket(schema.Runs)
	if err != nil {
		return nil, err
	}
	return getRun(b, id)
}

// DeleteRun deletes a run's record, if it exists.
func (tx *Tx) DeleteRun(id string) error {
	b, err := tx.bucket(schema.Runs)
	if err != nil {
		return err
	}
	idx, err := tx.bucket(schema.RunIndex)
	if err != nil {
		return err
	}
	r, err := getRun(b, id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := idx.Delete(schema.RunIndexKey(string(r.Status), id)); err != nil {
		return err
	}
	return b.Delete([]byte(id))
}

// RunsWithStatus returns the runs with status st, in ID order. For the
// running ones it reads the status index; the ended ones (not indexed: see
// PutRun) it finds by reading every run.
func (tx *Tx) RunsWithStatus(st RunStatus) ([]*Run, error) {
	b, err := tx.bucket(schema.Runs)
	if err != nil {
		return nil, err
	}
	if st != RunRunning {
		return scanRuns(b, st)
	}
	idx, err := tx.bucket(schema.RunIndex)
	if err != nil {
		return nil, err
	}
	p := schema.RunIndexKey(string(st), "")
	var out []*Run
	c := idx.Cursor()
	for k, _ := c.Seek(p); k != nil && len(k) >= len(p) && string(k[:len(p)]) == string(p); k, _ = c.Next() {
		r, err := getRun(b, string(k[len(p):]))
		if errors.Is(err, ErrNotFound) {
			continue // cannot happen while PutRun and DeleteRun keep the index
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// scanRuns reads every run for those with status st. A record that cannot
// be read is an error, as getRun's are.
func scanRuns(b *bbolt.Bucket, st RunStatus) ([]*Run, error) {
	var out []*Run
	err := b.ForEach(func(k, _ []byte) error {
		r, err := getRun(b, string(k))
		if err == nil && r.Status == st {
			out = append(out, r)
		}
		return err
	})
	return out, err
}

func getRun(b *bbolt.Bucket, id string) (*Run, error) {
	v := b.Get([]byte(id))
	if v == nil {
		return nil, ErrNotFound
	}
	r := new(Run)
	if err := json.Unmarshal(v, r); err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	return r, nil
}
