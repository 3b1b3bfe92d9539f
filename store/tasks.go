package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deerflow/deerflow/store/internal/codec"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// Task is the record of one subagent task, kept with the run that
// delegated it. Statuses are those of event.Task (pending, running,
// completed, failed, cancelled, timed_out, interrupted).
type Task struct {
	ID          string    `json:"id"`
	RunID       string    `json:"run_id"`
	ThreadID    string    `json:"thread_id,omitempty"` // the lead's thread
	ChatKey     string    `json:"chat_key,omitempty"`
	Type        string    `json:"type,omitempty"`
	Description string    `json:"description,omitempty"`
	Status      string    `json:"status"`
	Created     time.Time `json:"created,omitzero"`
	Started     time.Time `json:"started,omitzero"`
	Ended       time.Time `json:"ended,omitzero"`
	Turn        int       `json:"turn,omitempty"`   // the lead's model response that made the call
	Result      string    `json:"result,omitempty"` // the start of the result, or the error
	// ReplyTo and Progress are the platform ids of the message the task's
	// progress reply answers and of that reply, set by the router, so that
	// the reply can be updated after a restart.
	ReplyTo  string `json:"reply_to,omitempty"`
	Progress string `json:"progress,omitempty"`
}

// UpdateTask applies fn to the task's record, starting from an empty
// record (with RunID and ID set) when there is none, and stores the result.
// Every writer goes through it, so writers that own different fields
// (the executor, the router) never undo each other.
func (tx *Tx) UpdateTask(runID, id string, fn func(*Task)) error {
	if runID == "" || id == "" {
		return errors.New("store: update task: empty id")
	}
	b, err := tx.bucket(schema.Tasks)
	if err != nil {
		return err
	}
	k := schema.TaskKey(runID, id)
	t := &Task{}
	if v := b.Get(k); v != nil {
		if err := json.Unmarshal(v, t); err != nil {
			return fmt.Errorf("store: task %s: %w", id, err)
		}
	}
	fn(t)
	t.RunID, t.ID = runID, id
	v, err := codec.JSON(t)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// Tasks returns the tasks of a run, in ID order (which is creation order).
func (tx *Tx) Tasks(runID string) ([]*Task, error) {
	b, err := tx.bucket(schema.Tasks)
	if err != nil {
		return nil, err
	}
	p := schema.TaskKey(runID, "")
	var out []*Task
	c := b.Cursor()
	for k, v := c.Seek(p); k != nil && len(k) >= len(p) && string(k[:len(p)]) == string(p); k, v = c.Next() {
		t := new(Task)
		if err := json.Unmarshal(v, t); err != nil {
			return nil, fmt.Errorf("store: task %s: %w", k[len(p):], err)
		}
		out = append(out, t)
	}
	return out, nil
}
