package research

import (
	"context"
	"errors"
	"fmt"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
)

// session is one Run: one message of a research conversation.
type session struct {
	r      *Researcher
	in     *agent.Input
	ctx    context.Context
	yield  func(event.Event) bool
	model  agent.ModelRef
	runRec *store.Run // the run's record, once begun
	gone   bool       // the consumer stopped iterating
}

// emit hands ev to the consumer. Only the run's goroutine calls it.
func (s *session) emit(ev event.Event) {
	if s.gone {
		return
	}
	if !s.yield(ev) {
		s.gone = true
	}
}

// status shows panel in the run's progress message.
func (s *session) status(panel, line string) {
	s.emit(event.Status{Panel: panel, Line: line})
}

func (s *session) run(mode string) {
	r, in := s.r, s.in
	now := r.opts.Now()
	rec := r.load(in.ThreadID)
	user := &store.Message{Role: "user", Content: in.Text, RunID: in.RunID, Time: now}
	switch mode {
	case Start, Auto:
		rec = &store.Research{
			ThreadID: in.ThreadID, ChatKey: in.ChatKey, UserID: in.UserID,
			Topic: in.Text, Auto: mode == Auto, Phase: store.ResearchPlanning, Created: now,
		}
		user.Content = "/research " + in.Text
		if mode == Auto {
			user.Content = "/research auto " + in.Text
		}
	case Resume:
		user = nil // the message it resumes is in the thread already
		if rec == nil || !r.unfinished(rec) {
			if s.begin(nil, nil) {
				s.fail(nil, "There is no unfinished research in this conversation to resume.", errors.New("research: nothing to resume"))
			}
			return
		}
	default:
		if rec == nil || (rec.Phase != store.ResearchClarifying && rec.Phase != store.ResearchReviewing) {
			if s.begin(nil, user) {
				s.fail(nil, "This research has ended; send /research with a topic to start another.", errors.New("research: not waiting for a reply"))
			}
			return
		}
	}
	s.emit(event.Started{Model: s.model.Name})
	// The research is this run's while it runs: live (for Status,
	// Resumable, Cancel) compares the thread's active run with RunID.
	rec.Updated, rec.RunID = now, in.RunID
	if !s.begin(rec, user) {
		return
	}
	switch {
	case mode == Start || mode == Auto:
		s.plan(rec, "")
	case mode == Resume:
		if rec.Plan == nil {
			rec.Phase, rec.Error = store.ResearchPlanning, ""
			s.plan(rec, "")
			return
		}
		s.execute(rec)
	case rec.Phase == store.ResearchClarifying:
		rec.Questions[len(rec.Questions)-1].Answer = in.Text
		rec.Phase = store.ResearchPlanning
		s.plan(rec, "")
	default:
		s.review(rec, in.Text)
	}
}

// begin records the run, the person's message and rec (when set) in one
// commit, with the input's OnBegin. Nothing the person sees comes before
// it: after a crash the message either runs again or is known to have
// started. It reports whether the commit landed; when not, the run has
// failed.
func (s *session) begin(rec *store.Research, user *store.Message) bool {
	in := s.in
	s.runRec = &store.Run{
		ID: in.RunID, ThreadID: in.ThreadID, ChatKey: in.ChatKey, Model: s.model.Name,
		Status: store.RunRunning, Started: s.r.opts.Now(), MessageID: in.MessageID, UserID: in.UserID,
	}
	run := *s.runRec
	err := s.r.opts.Store.Batch(func(tx *store.Tx) error {
		if user != nil {
			u := *user
			if err := tx.AppendMessages(in.ThreadID, &u); err != nil {
				return err
			}
			run.FirstSeq = u.Seq
		}
		if rec != nil {
			if err := tx.PutResearch(rec); err != nil {
				return err
			}
		}
		if in.OnBegin != nil {
			if err := in.OnBegin(tx); err != nil {
				return err
			}
		}
		return tx.PutRun(&run)
	})
	s.r.opts.Agent.ForgetHistory(in.ThreadID)
	if err != nil {
		s.runRec = nil
		s.r.log.ErrorContext(s.ctx, "starting a research run", "thread", in.ThreadID, "err", err)
		s.emit(event.Error{Text: "I couldn't save this conversation; please try again.", Err: err})
		return false
	}
	return true
}

// save stores rec (steps' progress, a new phase).
func (s *session) save(rec *store.Research) error {
	rec.Updated = s.r.opts.Now()
	return s.r.opts.Store.Batch(func(tx *store.Tx) error { return tx.PutResearch(rec) })
}

// end records how the run ended with rec (when set) and, when answer is
// set, appends it to the thread as the run's answer in the same commit.
func (s *session) end(rec *store.Research, status store.RunStatus, errText, answer string) error {
	if s.runRec == nil {
		return nil
	}
	run := *s.runRec
	run.Status, run.Ended, run.Error = status, s.r.opts.Now(), errText
	if rec != nil {
		rec.Updated = run.Ended
	}
	err := s.r.opts.Store.Batch(func(tx *store.Tx) error {
		if rec != nil {
			if err := tx.PutResearch(rec); err != nil {
				return err
			}
		}
		if answer != "" {
			m := &store.Message{Role: "assistant", Content: answer, RunID: run.ID, Time: run.Ended}
			if err := tx.AppendMessages(run.ThreadID, m); err != nil {
				return err
			}
			if s.in.OnAnswer != nil {
				if err := s.in.OnAnswer(tx, answer); err != nil {
					return err
				}
			}
		}
		return tx.PutRun(&run)
	})
	if answer != "" {
		s.r.opts.Agent.ForgetHistory(run.ThreadID)
	}
	return err
}

// answer ends the run with text as its answer (a question, the plan, the
// report).
func (s *session) answer(rec *store.Research, text string) {
	if err := s.end(rec, store.RunDone, "", text); err != nil {
		s.r.log.ErrorContext(s.ctx, "saving a research answer", "thread", s.in.ThreadID, "err", err)
		s.emit(event.Error{Text: "I couldn't save this conversation; please try again.", Err: err})
		return
	}
	s.emit(event.Answer{Text: text})
}

// fail ends the run with a failure the person reads as text; rec, when
// set, keeps what was done.
func (s *session) fail(rec *store.Research, text string, err error) {
	s.r.log.WarnContext(s.ctx, "research failed", "thread", s.in.ThreadID, "err", err)
	if rec != nil && rec.Phase != store.ResearchReviewing && rec.Phase != store.ResearchClarifying {
		rec.Phase, rec.Error = store.ResearchFailed, err.Error()
	}
	if serr := s.end(rec, store.RunError, err.Error(), ""); serr != nil {
		s.r.log.ErrorContext(s.ctx, "recording a failed research run", "err", serr)
	}
	s.emit(event.Error{Text: text, Err: err})
}

// stopped ends a run whose context ended. Stopped by the person (/stop),
// the research is cancelled; otherwise (shutdown) it stays unfinished, for
// /retry.
func (s *session) stopped(rec *store.Research) {
	cause := context.Cause(s.ctx)
	status := store.RunCancelled
	if errors.Is(cause, agent.ErrStopped) || errors.Is(cause, context.Canceled) {
		if rec != nil {
			rec.Phase = store.ResearchCancelled
		}
	} else {
		status = store.RunInterrupted
	}
	if err := s.end(rec, status, "", ""); err != nil {
		s.r.log.ErrorContext(s.ctx, "recording a stopped research run", "err", err)
	}
	s.emit(event.Stopped{Err: cause})
}

// plan asks the planner for a plan (or a clarifying question) and shows
// it; feedback, when set, is the person's change to the current plan.
func (s *session) plan(rec *store.Research, feedback string) {
	if feedback == "" {
		s.status("🧭 Planning the research…", "planning the research")
	} else {
		s.status("🧭 Revising the plan…", "revising the plan")
	}
	ask := feedback == "" && !rec.Auto && len(rec.Questions) < s.r.opts.MaxClarifications
	out, err := s.r.askPlanner(s.ctx, s.model, rec, feedback, ask)
	if err != nil {
		if s.ctx.Err() != nil {
			s.stopped(rec)
			return
		}
		text := "I couldn't make a research plan: " + err.Error() + ". Send /retry to try again, or /research with a more specific topic."
		var le *llm.Error
		if errors.As(err, &le) {
			text = llm.UserMessage(err) + " Send /retry to try the plan again."
		}
		if feedback != "" {
			text = "I couldn't revise the plan: " + err.Error() + ". The plan above still stands: reply ok to start it, or say what to change."
			if le != nil {
				text = llm.UserMessage(err) + " The plan above still stands: reply ok to start it, or say what to change."
			}
		}
		s.fail(rec, text, err)
		return
	}
	switch {
	case out.question != "":
		rec.Questions = append(rec.Questions, store.ResearchQuestion{Question: out.question})
		rec.Phase = store.ResearchClarifying
		s.answer(rec, "❓ "+out.question+"\n\nYour answer shapes the research plan; /stop drops the research.")
	case out.accepted:
		s.execute(rec)
	default:
		rec.Plan = out.plan
		if feedback != "" {
			rec.Revisions++
			rec.Feedback = append(rec.Feedback, feedback)
		}
		if rec.Auto {
			s.execute(rec)
			return
		}
		rec.Phase = store.ResearchReviewing
		// Front ends with buttons offer the two replies that need no words.
		s.emit(event.Clarification{Question: "Start this research plan?", Options: []string{planStart, planCancel},
			Replies: []string{"ok", "/stop"}, Keep: true})
		s.answer(rec, planMessage(rec, s.r.opts.MaxPlanIterations))
	}
}

// The plan review's buttons.
const (
	planStart  = "▶ Start the research"
	planCancel = "✖ Cancel"
)

// review takes the person's reply to the plan: an ok starts it; changes
// go back to the planner, which may also recognise the reply as an ok.
func (s *session) review(rec *store.Research, reply string) {
	if approves(reply) {
		s.execute(rec)
		return
	}
	if rec.Revisions >= s.r.opts.MaxPlanIterations {
		text := fmt.Sprintf("I've revised this plan as often as I do for one research (%d of %d). Reply ok to start it as it stands, or /stop to drop it.", rec.Revisions, s.r.opts.MaxPlanIterations)
		if rec.Revisions == 0 {
			text = "Plans are not revised on this deerflow (research.max_plan_iterations is 0). Reply ok to start this one, or /stop to drop it."
		}
		s.answer(rec, text)
		return
	}
	s.plan(rec, reply)
}

// runFailedText is what the person reads when every step failed.
func runFailedText(n int) string {
	return fmt.Sprintf("None of the %d research steps finished, so there is no report. Their replies above say why; send /retry to run them again.", n)
}
