// Package research is /research: planned deep research with the plan
// reviewed in the chat. A planner turns the topic (after up to a few
// clarifying questions) into a plan of research and processing steps; the
// person accepts it or asks for changes; the steps run as parallel
// subagents, each shown as its own threaded reply; a reporter writes the
// report, whose references are the pages the steps actually read, and it
// is delivered as report.md.
//
// A research is a conversation across several messages. Its state (phase,
// plan, each step's findings) is kept with the thread in the store, so a
// restart loses nothing: /retry resumes an interrupted research with the
// steps that had not finished.
package research

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/subagents"
	"github.com/deerflow/deerflow/tools"
)

// Modes of Run: what the message that starts it is.
const (
	Start  = "start"  // "/research topic": plan, then review
	Auto   = "auto"   // "/research auto topic": plan and run without review
	Reply  = "reply"  // the person's answer to a question or to the plan
	Resume = "resume" // /retry of an unfinished research
)

// Options configures a Researcher.
type Options struct {
	Store *store.Store // required
	// Agent is the lead agent: its models, and its run registry, which
	// makes a research the thread's active run (/stop, /status, shutdown).
	Agent     *agent.Agent       // required
	Subagents *subagents.Manager // required; runs the steps
	// MaxClarifications is how many questions may be asked before
	// planning (0: none). MaxSteps bounds a plan (0 → 5).
	// MaxPlanIterations is how many revised plans the person's changes may
	// produce (0: none; the first plan must then be accepted).
	MaxClarifications int
	MaxSteps          int
	MaxPlanIterations int
	// SaveReport writes the report into the thread's outputs and returns
	// it ready to deliver; nil: the report is only posted.
	SaveReport func(threadID, name string, data []byte) (event.File, error)
	Logger     *slog.Logger
	Now        func() time.Time
}

// Researcher runs researches. It is safe for concurrent use.
type Researcher struct {
	opts Options
	log  *slog.Logger
}

// New returns a Researcher.
func New(opts Options) (*Researcher, error) {
	if opts.Store == nil || opts.Agent == nil || opts.Subagents == nil {
		return nil, errors.New("research: store, agent and subagents are required")
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 5
	}
	opts.MaxClarifications = max(opts.MaxClarifications, 0)
	opts.MaxPlanIterations = max(opts.MaxPlanIterations, 0)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Researcher{opts: opts, log: opts.Logger}, nil
}

// load returns the thread's research, nil when it has none.
func (r *Researcher) load(threadID string) *store.Research {
	var rec *store.Research
	err := r.opts.Store.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Research(threadID)
		return err
	})
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			r.log.Error("reading a research", "thread", threadID, "err", err)
		}
		return nil
	}
	return rec
}

// Pending reports whether the thread's research waits for the person: a
// clarifying question or the plan. Their next message answers it.
func (r *Researcher) Pending(threadID string) bool {
	rec := r.load(threadID)
	return rec != nil && (rec.Phase == store.ResearchClarifying || rec.Phase == store.ResearchReviewing)
}

// Resumable reports whether the thread has a research that stopped before
// its report (a restart, a failure) and is not running now.
func (r *Researcher) Resumable(threadID string) bool {
	rec := r.load(threadID)
	return rec != nil && r.unfinished(rec) && !r.live(rec)
}

func (r *Researcher) unfinished(rec *store.Research) bool {
	switch rec.Phase {
	case store.ResearchPlanning, store.ResearchRunning, store.ResearchFailed:
		return true
	}
	return false
}

// live reports whether rec's run is the thread's active run.
func (r *Researcher) live(rec *store.Research) bool {
	a, ok := r.opts.Agent.Active(rec.ThreadID)
	return ok && a.ID == rec.RunID
}

// Cancel drops a research that is not running: one waiting for the
// person, or one a restart interrupted. It reports whether there was one.
// (A running research is stopped like any run: /stop, through the runner.)
func (r *Researcher) Cancel(threadID string) bool {
	cancelled := false
	err := r.opts.Store.Update(func(tx *store.Tx) error {
		cancelled = false
		err := tx.UpdateResearch(threadID, func(rec *store.Research) error {
			if !(rec.Phase == store.ResearchClarifying || rec.Phase == store.ResearchReviewing || r.unfinished(rec) && !r.live(rec)) {
				return nil
			}
			rec.Phase, rec.Updated = store.ResearchCancelled, r.opts.Now()
			cancelled = true
			return nil
		})
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		r.log.Error("cancelling a research", "thread", threadID, "err", err)
		return false
	}
	return cancelled
}

// Status describes the thread's research for /status; "" when it has
// none.
func (r *Researcher) Status(threadID string) string {
	rec := r.load(threadID)
	if rec == nil {
		return ""
	}
	name := rec.Topic
	if rec.Plan != nil {
		name = rec.Plan.Title
	}
	var state string
	live := r.live(rec)
	switch rec.Phase {
	case store.ResearchClarifying:
		state = "waiting for your answer to my question"
	case store.ResearchReviewing:
		state = "the plan waits for your ok or changes"
		if rec.Revisions > 0 {
			state = fmt.Sprintf("revised plan %d of %d waits for your ok or changes", rec.Revisions, r.opts.MaxPlanIterations)
		}
	case store.ResearchPlanning:
		state = "planning"
		if !live {
			state = "planning was interrupted; /retry plans again"
		}
	case store.ResearchRunning:
		done := 0
		for _, s := range rec.Steps {
			if s.Status == event.TaskCompleted {
				done++
			}
		}
		state = fmt.Sprintf("running, %d of %d steps done", done, len(rec.Steps))
		if !live {
			state = fmt.Sprintf("interrupted with %d of %d steps done; /retry resumes it", done, len(rec.Steps))
		}
	case store.ResearchDone:
		state = "done, the report was delivered"
	case store.ResearchCancelled:
		state = "cancelled"
	case store.ResearchFailed:
		state = "failed (" + rec.Error + "); /retry tries again"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Research: %s — %s", oneLine(name, 80), state)
	if rec.Plan != nil && rec.Phase != store.ResearchClarifying {
		sb.WriteString("\n")
		sb.WriteString(stepList(rec))
	}
	return sb.String()
}

// stepList is the plan's steps, one line each, with each one's state once
// the plan runs.
func stepList(rec *store.Research) string {
	var sb strings.Builder
	for i, st := range rec.Plan.Steps {
		mark := "▫️"
		if i < len(rec.Steps) {
			mark = statusMark(rec.Steps[i].Status)
		}
		fmt.Fprintf(&sb, "%s %d. %s", mark, i+1, oneLine(st.Title, 100))
		if st.StepType == stepProcessing {
			sb.WriteString(" (processing)")
		}
		if i < len(rec.Plan.Steps)-1 {
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

func statusMark(status string) string {
	switch status {
	case event.TaskCompleted:
		return "✅"
	case event.TaskRunning:
		return "⏳"
	case event.TaskFailed, event.TaskTimedOut:
		return "❌"
	case event.TaskCancelled, event.TaskInterrupted:
		return "⏹"
	}
	return "▫️"
}

// oneLine is s on one line, cut to n characters.
func oneLine(s string, n int) string {
	return tools.Clip(strings.Join(strings.Fields(s), " "), n)
}

// Run handles one message of a research conversation (mode says which
// kind) as the thread's run, reporting like agent.Run: it ends with
// event.Answer (a question, the plan or the report), event.Error or
// event.Stopped.
func (r *Researcher) Run(ctx context.Context, mode string, in agent.Input) iter.Seq[event.Event] {
	return func(yield func(event.Event) bool) {
		if in.RunID == "" {
			in.RunID = agent.NewID("run_")
		}
		model := r.model(in)
		hctx, release, ok := r.opts.Agent.Hold(ctx, in.ThreadID, in.RunID, model.Name)
		if !ok {
			yield(event.Error{Text: "I'm still working on the previous message in this conversation.", Err: agent.ErrThreadBusy})
			return
		}
		defer release()
		s := &session{r: r, in: &in, ctx: hctx, yield: yield, model: model}
		s.run(mode)
	}
}

// model is the model the thread uses: its /models choice, else its
// agent's, else the default.
func (r *Researcher) model(in agent.Input) agent.ModelRef {
	name := in.Model
	if name == "" {
		r.opts.Store.View(func(tx *store.Tx) error {
			if t, err := tx.Thread(in.ThreadID); err == nil {
				name = t.Model
			}
			return nil
		})
	}
	if name == "" && in.Persona != nil {
		name = in.Persona.Model
	}
	m, _ := r.opts.Agent.Model(name)
	return m
}
