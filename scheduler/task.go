package scheduler

import (
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/deerflow/deerflow/store"
)

// Task is one scheduled task. It belongs to the conversation it was
// created in (ChatKey), not to an agent thread: /new keeps it.
type Task struct {
	ID          string    `json:"id"`
	ChatKey     string    `json:"chat_key"`            // channel:chat[:topic]: where it runs and answers
	User        string    `json:"user"`                // channel:user who created it; its runs are theirs
	UserName    string    `json:"user_name,omitempty"` // their platform user name, when known
	Prompt      string    `json:"prompt"`
	Description string    `json:"description,omitempty"`
	Schedule    Schedule  `json:"schedule"`
	NextRun     time.Time `json:"next_run,omitzero"` // zero: none (paused, or a one-shot that was run)
	LastRun     time.Time `json:"last_run,omitzero"`
	LastStatus  string    `json:"last_status,omitempty"` // "ok", "error: …", "skipped: …", "paused: …"
	Failures    int       `json:"failures,omitempty"`    // failed runs in a row
	Paused      bool      `json:"paused,omitempty"`
	RunID       string    `json:"run_id,omitempty"` // its occurrence submitted and not yet ended
	Thread      string    `json:"thread,omitempty"` // the thread every run goes on in (NewTask.Continue); "": a fresh one each
	Created     time.Time `json:"created"`
}

// label is how the task is named in the chat: its description, else the
// start of its prompt.
func (t *Task) label() string {
	if t.Description != "" {
		return t.Description
	}
	return clip(t.Prompt, 60)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Persistence: the tasks of a conversation are one JSON array in the
// store's state bucket under convKey(chatKey), and indexKey lists the
// conversations that have tasks. Every write goes through Scheduler.wmu
// from the in-memory copy, so a read-modify-write never races another.
const (
	indexKey   = "scheduler:index"
	convPrefix = "scheduler:conv:"
)

func convKey(chatKey string) string { return convPrefix + chatKey }

// putConv stores a conversation's tasks (none: an empty list) and keeps
// the index of conversations in step: index is the current one, and the
// new one is returned.
func putConv(tx *store.Tx, chatKey string, tasks []*Task, index []string) ([]string, error) {
	if tasks == nil {
		tasks = []*Task{}
	}
	data, err := json.Marshal(tasks)
	if err != nil {
		return nil, err
	}
	if err := tx.PutState(convKey(chatKey), data); err != nil {
		return nil, err
	}
	has := slices.Contains(index, chatKey)
	switch {
	case len(tasks) > 0 && !has:
		index = append(slices.Clone(index), chatKey)
	case len(tasks) == 0 && has:
		index = slices.DeleteFunc(slices.Clone(index), func(k string) bool { return k == chatKey })
	default:
		return index, nil
	}
	data, err = json.Marshal(index)
	if err != nil {
		return nil, err
	}
	return index, tx.PutState(indexKey, data)
}

// load reads every stored task, by conversation, and the index.
func load(st *store.Store) (map[string][]*Task, []string, error) {
	convs := map[string][]*Task{}
	var index []string
	err := st.View(func(tx *store.Tx) error {
		data, err := tx.State(indexKey)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &index); err != nil {
			return err
		}
		for _, key := range index {
			data, err := tx.State(convKey(key))
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			var tasks []*Task
			if err := json.Unmarshal(data, &tasks); err != nil {
				return err
			}
			convs[key] = tasks
		}
		return nil
	})
	return convs, index, err
}
