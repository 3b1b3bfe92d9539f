// Package choice keeps the choices a message offers as buttons: the
// question and its options, who may answer, and whether it was answered.
// A record is stored (in the store's state bucket) under a random id; a
// button carries that id and the option's number, and a press is looked up
// by it, so nothing a platform sends back is trusted beyond naming a
// record.
//
// It imports bus and store only.
package choice

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
)

// Kinds of choice.
const (
	Clarify = "clarify" // an ask_clarification's options: a press answers it
	Model   = "model"   // /models: a press switches the conversation's model
	New     = "new"     // /new during a run: confirm or keep going
	Agent   = "agent"   // /agent: a press switches the conversation's agent
)

// Record is one message's choice.
type Record struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	ChatKey string   `json:"chat"`
	UserID  string   `json:"user"` // who asked (whose run asked): in groups only they may answer
	Group   bool     `json:"group,omitempty"`
	Text    string   `json:"text"` // the question, for the edited message
	Options []string `json:"options"`
	Replies []string `json:"replies,omitempty"` // what each option says in the conversation; default the option
	Current int      `json:"current,omitempty"` // Model, Agent: the option in use, 1-based; 0 none

	// Answered is set by the first press that counts.
	Answered   bool      `json:"answered,omitempty"`
	Answer     string    `json:"answer,omitempty"`
	AnsweredBy string    `json:"by,omitempty"`
	Created    time.Time `json:"created"`
}

// Reply is what choosing option i (0-based) says in the conversation.
func (r *Record) Reply(i int) string {
	if i < len(r.Replies) && r.Replies[i] != "" {
		return r.Replies[i]
	}
	return r.Options[i]
}

// maxButtonText keeps a button's label within every platform's limit
// (Slack's is 75 characters).
const maxButtonText = 70

// NewID returns a fresh record id (16 hex digits).
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Buttons are the record's options as buttons, one a row.
func (r *Record) Buttons() [][]bus.Button {
	rows := make([][]bus.Button, 0, len(r.Options))
	for i, o := range r.Options {
		text := o
		if r.Current == i+1 {
			text = "✓ " + text
		}
		if rs := []rune(text); len(rs) > maxButtonText {
			text = string(rs[:maxButtonText-1]) + "…"
		}
		rows = append(rows, []bus.Button{{Text: text, ID: r.ID + "." + strconv.Itoa(i+1)}})
	}
	return rows
}

// ParseID splits a button id into the record's id and the option's index
// (0-based); ok is false for an id we never made.
func ParseID(id string) (rec string, option int, ok bool) {
	rec, n, found := strings.Cut(id, ".")
	i, err := strconv.Atoi(n)
	if !found || err != nil || i < 1 || i > 100 || len(rec) != 16 {
		return "", 0, false
	}
	if _, err := hex.DecodeString(rec); err != nil {
		return "", 0, false
	}
	return rec, i - 1, true
}

func key(id string) string { return "choice:" + id }

// PutTx stores rec.
func PutTx(tx *store.Tx, rec *Record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return tx.PutState(key(rec.ID), data)
}

// ErrNotFound: no record has that id.
var ErrNotFound = errors.New("choice: not found")

// GetTx returns the record id.
func GetTx(tx *store.Tx, id string) (*Record, error) {
	data, err := tx.State(key(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, ErrNotFound // unreadable: as good as gone
	}
	return &rec, nil
}

// openKey holds, per conversation, the clarification its last answer
// asked: a press counts only while that answer is the last.
func openKey(chatKey string) string { return "choice:open:" + chatKey }

// SetOpenTx records that the conversation's last answer asked id ("":
// it asked nothing), so the buttons of earlier questions no longer count.
func SetOpenTx(tx *store.Tx, chatKey, id string) error {
	v, err := tx.State(openKey(chatKey))
	if err == nil && string(v) == id || id == "" && errors.Is(err, store.ErrNotFound) {
		return nil // as it is: every answer sets it, and a write rewrites a page
	}
	return tx.PutState(openKey(chatKey), []byte(id))
}

// OpenTx reports whether id is the question the conversation's last
// answer asked.
func OpenTx(tx *store.Tx, chatKey, id string) bool {
	v, err := tx.State(openKey(chatKey))
	return err == nil && string(v) == id
}
