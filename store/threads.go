package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deerflow/deerflow/store/internal/codec"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// Thread is a conversation's record. Its messages are stored apart, under
// the same ID.
type Thread struct {
	ID      string    `json:"id"`
	ChatKey string    `json:"chat_key,omitempty"`
	Title   string    `json:"title,omitempty"`
	Model   string    `json:"model,omitempty"` // chosen model name; "" means the default
	Created time.Time `json:"created,omitzero"`
	Updated time.Time `json:"updated,omitzero"`
	Summary string    `json:"summary,omitempty"` // summary of the messages it replaces
	// SummarySeq is the last message the summary covers: the model sees
	// the summary, then the messages after it.
	SummarySeq uint64 `json:"summary_seq,omitempty"`
	// Tokens used by the thread's runs, in total.
	PromptTokens     int64 `json:"prompt_tokens,omitempty"`
	CompletionTokens int64 `json:"completion_tokens,omitempty"`
	// Meta holds free-form values for features without a field of their own.
	Meta map[string]string `json:"meta,omitempty"`
}

// PutThread creates or replaces a thread's record.
func (tx *Tx) PutThread(t *Thread) error {
	if err := checkThreadID(t.ID); err != nil {
		return err
	}
	b, err := tx.bucket(schema.Threads)
	if err != nil {
		return err
	}
	v, err := codec.JSON(t)
	if err != nil {
		return fmt.Errorf("store: put thread %s: %w", t.ID, err)
	}
	return b.Put([]byte(t.ID), v)
}

// Thread returns a thread's record, or ErrNotFound.
func (tx *Tx) Thread(id string) (t *Thread, err error) {
	defer tx.catch(id, &err)
	b, err := tx.bucket(schema.Threads)
	if err != nil {
		return nil, err
	}
	v := b.Get([]byte(id))
	if v == nil {
		return nil, ErrNotFound
	}
	return decodeThread(id, v)
}

// DeleteThread deletes a thread's record, its messages, its sequence
// counter and its research. Chat mappings pointing at it stay; callers remap them. Deleting a
// thread that does not exist is not an error.
func (tx *Tx) DeleteThread(id string) error {
	b, err := tx.bucket(schema.Threads)
	if err != nil {
		return err
	}
	if err := b.Delete([]byte(id)); err != nil {
		return err
	}
	rb, err := tx.bucket(schema.Research)
	if err != nil {
		return err
	}
	if err := rb.Delete([]byte(id)); err != nil {
		return err
	}
	if err := checkThreadID(id); err != nil {
		return nil // no messages can be stored under such an id
	}
	if _, err := tx.deleteMessages(id, 0); err != nil {
		return err
	}
	seqs, err := tx.bucket(schema.Seqs)
	if err != nil {
		return err
	}
	return seqs.Delete([]byte(id))
}

// Threads calls fn for each thread, in ID order, until fn returns false.
func (tx *Tx) Threads(fn func(*Thread) bool) error {
	b, err := tx.bucket(schema.Threads)
	if err != nil {
		return err
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		t, err := decodeThread(string(k), v)
		if err != nil {
			return err
		}
		if !fn(t) {
			return nil
		}
	}
	return nil
}

func decodeThread(id string, v []byte) (*Thread, error) {
	t := new(Thread)
	if err := json.Unmarshal(v, t); err != nil {
		return nil, damagedRecord(schema.Threads, id, err)
	}
	return t, nil
}

// checkThreadID rejects ids that cannot be a message key prefix.
func checkThreadID(id string) error {
	if id == "" {
		return errors.New("store: empty thread id")
	}
	if strings.IndexByte(id, 0) >= 0 {
		return fmt.Errorf("store: thread id %q contains a NUL byte", id)
	}
	return nil
}
