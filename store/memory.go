package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deerflow/deerflow/store/internal/codec"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// Memory is what the agent remembers about one person (or chat).
type Memory struct {
	Scope     string    `json:"scope"`
	Off       bool      `json:"off,omitempty"` // the person switched it off
	Work      Summary   `json:"work,omitzero"`
	Personal  Summary   `json:"personal,omitzero"`
	TopOfMind Summary   `json:"top_of_mind,omitzero"`
	Facts     []Fact    `json:"facts,omitempty"`
	NextID    int       `json:"next_id,omitempty"`
	Updated   time.Time `json:"updated,omitzero"`
}

// Summary is one paragraph of the memory, rewritten as it changes.
type Summary struct {
	Text    string    `json:"text,omitempty"`
	Updated time.Time `json:"updated,omitzero"`
}

// Fact is one durable thing learnt about the person.
type Fact struct {
	ID         string    `json:"id"`
	Content    string    `json:"content"`
	Category   string    `json:"category"` // preference|knowledge|context|behavior|goal|correction
	Confidence float64   `json:"confidence"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	Source     string    `json:"source,omitempty"` // the thread it was learnt in
}

// Exchange is one finished turn waiting to be read by the memory updater.
type Exchange struct {
	RunID    string    `json:"run_id"`
	ThreadID string    `json:"thread_id,omitempty"`
	User     string    `json:"user"`
	Answer   string    `json:"answer"`
	Time     time.Time `json:"time"`
}

// Memory returns the scope's memory; an empty one (Scope set) when there
// is none yet.
func (tx *Tx) Memory(scope string) (*Memory, error) {
	b, err := tx.bucket(schema.Memory)
	if err != nil {
		return nil, err
	}
	m := &Memory{Scope: scope}
	if v := b.Get(schema.MemoryKey(scope)); v != nil {
		if err := json.Unmarshal(v, m); err != nil {
			return nil, fmt.Errorf("store: memory of %s: %w", scope, err)
		}
	}
	return m, nil
}

// PutMemory stores m under m.Scope.
func (tx *Tx) PutMemory(m *Memory) error {
	if m.Scope == "" {
		return errors.New("store: put memory: empty scope")
	}
	b, err := tx.bucket(schema.Memory)
	if err != nil {
		return err
	}
	v, err := codec.JSON(m)
	if err != nil {
		return err
	}
	return b.Put(schema.MemoryKey(m.Scope), v)
}

// DeleteMemory forgets everything about scope, waiting exchanges included.
func (tx *Tx) DeleteMemory(scope string) error {
	b, err := tx.bucket(schema.Memory)
	if err != nil {
		return err
	}
	if err := b.Delete(schema.MemoryKey(scope)); err != nil {
		return err
	}
	return tx.deletePending(scope, nil)
}

// AddExchange queues a finished turn for the scope's updater. Adding the
// same run twice stores it once.
func (tx *Tx) AddExchange(scope string, e *Exchange) error {
	if scope == "" || e.RunID == "" {
		return errors.New("store: add exchange: empty scope or run")
	}
	b, err := tx.bucket(schema.Memory)
	if err != nil {
		return err
	}
	v, err := codec.JSON(e)
	if err != nil {
		return err
	}
	return b.Put(append(schema.PendingPrefix(scope), e.RunID...), v)
}

// Exchanges returns the scope's waiting turns, oldest run first.
func (tx *Tx) Exchanges(scope string) ([]*Exchange, error) {
	b, err := tx.bucket(schema.Memory)
	if err != nil {
		return nil, err
	}
	p := schema.PendingPrefix(scope)
	var out []*Exchange
	c := b.Cursor()
	for k, v := c.Seek(p); k != nil && schema.HasPrefix(k, p); k, v = c.Next() {
		e := new(Exchange)
		if err := json.Unmarshal(v, e); err != nil {
			return nil, fmt.Errorf("store: exchange %q: %w", k, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// DeleteExchanges removes the named runs from the scope's queue (all of
// them when runs is nil).
func (tx *Tx) DeleteExchanges(scope string, runs []string) error {
	return tx.deletePending(scope, runs)
}

func (tx *Tx) deletePending(scope string, runs []string) error {
	b, err := tx.bucket(schema.Memory)
	if err != nil {
		return err
	}
	p := schema.PendingPrefix(scope)
	if runs != nil {
		for _, r := range runs {
			if err := b.Delete(append(p[:len(p):len(p)], r...)); err != nil {
				return err
			}
		}
		return nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(p); k != nil && schema.HasPrefix(k, p); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// PendingScopes returns the scopes with waiting turns.
func (tx *Tx) PendingScopes() ([]string, error) {
	b, err := tx.bucket(schema.Memory)
	if err != nil {
		return nil, err
	}
	var out []string
	c := b.Cursor()
	p := []byte("p\x00")
	for k, _ := c.Seek(p); k != nil && schema.HasPrefix(k, p); k, _ = c.Next() {
		rest := k[len(p):]
		i := 0
		for i < len(rest) && rest[i] != 0 {
			i++
		}
		if s := string(rest[:i]); len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out, nil
}

// OnCommit runs fn after the transaction commits (never if it rolls back).
func (tx *Tx) OnCommit(fn func()) { tx.tx.OnCommit(fn) }
