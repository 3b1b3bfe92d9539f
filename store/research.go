package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deerflow/deerflow/store/internal/codec"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// Research phases.
const (
	ResearchPlanning   = "planning"   // the planner is at work (or was, before a restart)
	ResearchClarifying = "clarifying" // a question is waiting for the person's answer
	ResearchReviewing  = "reviewing"  // the plan is waiting for "ok" or changes
	ResearchRunning    = "running"    // the steps or the report are under way (or were, before a restart)
	ResearchDone       = "done"
	ResearchCancelled  = "cancelled"
	ResearchFailed     = "failed" // planning or the report failed; steps already done are kept
)

// Research is a thread's /research: the topic, the conversation about the
// plan, the plan and each step's findings. A thread keeps its latest one.
type Research struct {
	ThreadID  string             `json:"thread_id"`
	ChatKey   string             `json:"chat_key,omitempty"`
	UserID    string             `json:"user_id,omitempty"`
	Topic     string             `json:"topic"`
	Auto      bool               `json:"auto,omitempty"` // no review of the plan
	Phase     string             `json:"phase"`
	Questions []ResearchQuestion `json:"questions,omitempty"` // clarifications, in order
	Plan      *ResearchPlan      `json:"plan,omitempty"`
	// Revisions counts the plans made from the person's changes; Feedback
	// holds those changes, in order.
	Revisions int            `json:"revisions,omitempty"`
	Feedback  []string       `json:"feedback,omitempty"`
	Steps     []ResearchStep `json:"steps,omitempty"`  // one per plan step, once running
	RunID     string         `json:"run_id,omitempty"` // the research's latest run
	Error     string         `json:"error,omitempty"`
	Created   time.Time      `json:"created,omitzero"`
	Updated   time.Time      `json:"updated,omitzero"`
}

// ResearchQuestion is a clarifying question and the person's answer.
type ResearchQuestion struct {
	Question string `json:"question"`
	Answer   string `json:"answer,omitempty"`
}

// ResearchPlan is the planner's plan, in the shape it is asked for.
type ResearchPlan struct {
	Title   string             `json:"title"`
	Thought string             `json:"thought"`
	Steps   []ResearchPlanStep `json:"steps"`
}

// ResearchPlanStep is one step of a plan.
type ResearchPlanStep struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	StepType    string `json:"step_type"` // "research" or "processing"
}

// ResearchStep is the state of one plan step while the plan runs. Status
// is a tools task status (pending, running, completed, ...).
type ResearchStep struct {
	Status   string           `json:"status"`
	TaskID   string           `json:"task_id,omitempty"`
	Findings string           `json:"findings,omitempty"`
	Sources  []ResearchSource `json:"sources,omitempty"` // pages the step actually read
	Started  time.Time        `json:"started,omitzero"`
	Ended    time.Time        `json:"ended,omitzero"`
}

// ResearchSource is a web page a step read.
type ResearchSource struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// Research returns the thread's research, or ErrNotFound.
func (tx *Tx) Research(threadID string) (*Research, error) {
	b, err := tx.bucket(schema.Research)
	if err != nil {
		return nil, err
	}
	v := b.Get([]byte(threadID))
	if v == nil {
		return nil, ErrNotFound
	}
	r := new(Research)
	if err := json.Unmarshal(v, r); err != nil {
		return nil, fmt.Errorf("store: research of %s: %w", threadID, err)
	}
	return r, nil
}

// PutResearch stores the thread's research, replacing the one before.
func (tx *Tx) PutResearch(r *Research) error {
	if r.ThreadID == "" {
		return errors.New("store: put research: empty thread id")
	}
	b, err := tx.bucket(schema.Research)
	if err != nil {
		return err
	}
	v, err := codec.JSON(r)
	if err != nil {
		return err
	}
	return b.Put([]byte(r.ThreadID), v)
}

// UpdateResearch applies fn to the thread's stored research and stores
// the result; ErrNotFound when there is none.
func (tx *Tx) UpdateResearch(threadID string, fn func(*Research) error) error {
	r, err := tx.Research(threadID)
	if err != nil {
		return err
	}
	if err := fn(r); err != nil {
		return err
	}
	r.ThreadID = threadID
	return tx.PutResearch(r)
}
