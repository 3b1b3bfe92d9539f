package lgwire

import (
	"encoding/json"
	"time"

	"github.com/deerflow/deerflow/store"
)

// The API's records in the store, which the api package writes and its
// gateway reads too.

// ChatKey is the conversation of API thread threadID: a stored thread is
// the API's when its ChatKey is this.
func ChatKey(threadID string) string { return "api:" + threadID }

// RunEntry is what the thread's record keeps of each of its runs (their
// status is the runner's, then the run record's).
type RunEntry struct {
	ID        string         `json:"id"`
	Assistant string         `json:"assistant_id"`
	Created   time.Time      `json:"created"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Strategy  string         `json:"strategy,omitempty"`
	Modes     []string       `json:"stream_mode,omitempty"`
	Config    map[string]any `json:"config,omitempty"`
	Context   map[string]any `json:"context,omitempty"`
}

// maxRunEntries is how many runs a thread lists (the latest).
const maxRunEntries = 100

// runsKey is the state record listing a thread's runs: apart from the
// thread's record, which a rollback restores byte for byte. Deleting the
// thread empties it.
func runsKey(threadID string) string { return "api:runs:" + threadID }

// RunEntries lists thread threadID's runs, oldest first.
func RunEntries(tx *store.Tx, threadID string) []RunEntry {
	var list []RunEntry
	data, _ := tx.State(runsKey(threadID))
	json.Unmarshal(data, &list)
	return list
}

// SetRunEntries replaces the list (keeping the latest maxRunEntries).
func SetRunEntries(tx *store.Tx, threadID string, list []RunEntry) error {
	if len(list) > maxRunEntries {
		list = list[len(list)-maxRunEntries:]
	}
	data, _ := json.Marshal(list)
	if len(list) == 0 {
		data = nil
	}
	return tx.PutState(runsKey(threadID), data)
}
