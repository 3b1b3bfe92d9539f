package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"

	"github.com/deerflow/deerflow/internal/logctx"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// Run runs one user turn on in.ThreadID and streams what happens. The
// sequence always ends with EventAnswer, EventError or EventStopped; the
// error of the last pair is non-nil for EventError. Stopping the iteration
// early cancels the run.
//
// The thread is persisted after every step, so a crash at any point leaves
// a history the next run can continue from (see repairHistory).
func (a *Agent) Run(ctx context.Context, in Input) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if in.RunID == "" {
			in.RunID = NewID("run_")
		}
		if !a.opts.Ephemeral {
			// Every line logged with the run's context names it (a
			// subagent's lines name its lead's run and its task).
			ctx = logctx.With(ctx, slog.String("run", in.RunID))
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		ar := &activeRun{id: in.RunID, started: a.opts.Now(), cancel: cancel, done: make(chan struct{})}
		if !a.acquire(in.ThreadID, ar) {
			yield(Event{Kind: EventError, RunID: in.RunID, ThreadID: in.ThreadID,
				Text: "I'm still working on the previous message in this conversation.", Err: ErrThreadBusy}, ErrThreadBusy)
			return
		}
		defer a.release(in.ThreadID, ar)
		r := &run{a: a, in: &in, ctx: ctx, cancel: cancel, yield: yield, ar: ar}
		r.measure()
	}
}

// run is the state of one Run.
type run struct {
	a      *Agent
	in     *Input
	ctx    context.Context
	cancel context.CancelCauseFunc
	yield  func(Event, error) bool
	ar     *activeRun
	gone   bool // the consumer stopped iterating
	capped bool // the run reached MaxTurns

	allowed []string       // the only tools of this run; nil: all
	usage   llm.Usage      // the run's tokens so far
	nudge   string         // a hidden note for the next model call only
	images  []llm.Image    // attached to the next model call only
	summary string         // the thread's summary, given before its messages
	daily   dailyUsage     // the conversation's tokens today (budget)
	stateMu sync.Mutex     // guards state
	state   map[string]any // middlewares' per-run values (RunState)
	userIdx int            // the run's user message in history
	turnCtx string         // TurnContext's text, given with it
	system  string         // the system prompt, built at the first model call
	outcome string         // how the run ended, for the metrics (noteEnd)
	gate    bool           // the begin commit must land before the next event (see exec)

	thread  *store.Thread
	model   ModelRef
	history []*store.Message
	rec     *store.Run

	pending  chan error // the last write started, until waited for
	writeErr error      // a write that failed
}

// emit hands ev to the consumer. Only the run's own goroutine calls it.
func (r *run) emit(ev Event) {
	if r.gone {
		return
	}
	if r.gate && ev.Kind != EventStarted {
		r.gate = false
		r.wait() // an error is kept in writeErr: the answer becomes a failure
	}
	ev.RunID, ev.ThreadID = r.in.RunID, r.in.ThreadID
	r.noteEnd(&ev)
	var err error
	if ev.Kind == EventError {
		err = ev.Err
	}
	if !r.yield(ev, err) {
		r.gone = true
		r.cancel(context.Canceled)
	}
}

// DamagedText is what a user is told when their conversation's stored
// history is damaged (store.ErrDamaged): the conversation is quarantined,
// nothing of it runs or is replayed, and /new starts over.
const DamagedText = "This conversation's stored history is damaged and can't be read, so I can't continue it. Send /new to start a new conversation."

func (r *run) exec() {
	if err := r.begin(); err != nil {
		if errors.Is(err, errBudget) {
			r.emit(Event{Kind: EventError, Text: r.budgetText(), Err: err})
			return
		}
		if errors.Is(err, store.ErrDamaged) { // quarantined: see DamagedText
			r.fail(err, DamagedText)
			return
		}
		r.fail(err, "I couldn't load this conversation; please try again.")
		return
	}
	// The message leaves its intake queue in the begin commit. The model
	// is asked while it lands, but nothing the person can see (text, a
	// tool call, an answer) comes out before it has: after a crash, a
	// message either shows nothing of its run and runs again, or is known
	// to have started (and is reported interrupted), never both.
	r.gate = r.in.OnBegin != nil
	r.emit(Event{Kind: EventStarted, Model: r.model.Name})
	toolCtx := r.ctx
	if f := r.a.opts.ToolContext; f != nil {
		c, err := f(r.ctx, r.in)
		if err != nil {
			r.fail(err, "I couldn't prepare the workspace for this conversation; please try again.")
			return
		}
		toolCtx = c
	}
	if f := r.a.opts.AllowedTools; f != nil {
		r.allowed = f(r.in)
	}
	specs := toolSpecs(r.a.opts.Tools, r.allowed, r.model.Vision)
	toolRounds, retried := 0, false
	for turn := 1; turn <= r.a.opts.MaxTurns; turn++ {
		if err := r.compact(); err != nil {
			if r.ctx.Err() != nil {
				r.stopped()
				return
			}
			r.a.log.WarnContext(r.ctx, "summarizing the conversation failed; going on without", "thread", r.in.ThreadID, "err", err)
		}
		req := &llm.Request{
			Model:       r.model.ID,
			Messages:    r.messages(),
			Tools:       specs,
			MaxTokens:   r.model.MaxTokens,
			Temperature: r.model.Temperature,
		}
		resp, err := r.a.chain.callModel(withStream(r.ctx, r), req, r.callModel)
		r.images, r.nudge = nil, "" // given to this call only
		if err != nil {
			if r.ctx.Err() != nil {
				r.stopped()
				return
			}
			r.fail(err, llm.UserMessage(err))
			return
		}
		r.usage.PromptTokens += resp.Usage.PromptTokens
		r.usage.CompletionTokens += resp.Usage.CompletionTokens
		r.usage.TotalTokens += resp.Usage.TotalTokens
		r.rec.Turns = turn
		r.rec.PromptTokens, r.rec.CompletionTokens = r.usage.PromptTokens, r.usage.CompletionTokens

		msg := fromLLM(&resp.Message, r.in.RunID, r.a.opts.Now())
		calls := resp.Message.ToolCalls
		if len(calls) == 0 {
			if strings.TrimSpace(msg.Content) == "" && toolRounds > 0 && !retried && resp.FinishReason != "length" && resp.FinishReason != "content_filter" {
				// An empty answer after tool calls: ask once more.
				retried = true
				r.nudge = "(Your last reply was empty. Write your final answer to the user now, based on the results above.)"
				r.emit(Event{Kind: EventTextReset})
				continue
			}
			if strings.TrimSpace(msg.Content) == "" {
				msg.Content = emptyAnswer(resp.FinishReason, toolRounds > 0)
			}
			r.finish(msg, r.usage)
			return
		}
		if err := r.save(msg); err != nil {
			r.fail(err, "I couldn't save this conversation; please try again.")
			return
		}
		results := r.runTools(toolCtx, turn, calls)
		toolRounds++
		if err := r.save(results...); err != nil {
			r.fail(err, "I couldn't save this conversation; please try again.")
			return
		}
		if r.ctx.Err() != nil {
			r.stopped()
			return
		}
		if text, ok := r.ending(calls, results); ok {
			// A tool that ends the run (ask_clarification): its result is
			// what the person reads, and their next message answers it.
			r.outcome = metrics.Clarification
			r.finish(&store.Message{Role: "assistant", Content: text, RunID: r.in.RunID, Time: r.a.opts.Now()}, r.usage)
			return
		}
	}
	r.capped = true
	r.finish(&store.Message{
		Role:    "assistant",
		Content: fmt.Sprintf("I stopped after %d steps, the limit for one request. Say \"continue\" and I'll carry on from here.", r.a.opts.MaxTurns),
		RunID:   r.in.RunID,
		Time:    r.a.opts.Now(),
	}, r.usage)
}

// ending returns the result of a call that ends the run, if one did (and
// did not fail).
func (r *run) ending(calls []llm.ToolCall, results []*store.Message) (string, bool) {
	for i, call := range calls {
		t, ok := r.a.opts.Tools.Get(call.Name)
		if !ok {
			continue
		}
		if e, ok := t.(tools.Ender); ok && e.EndsRun() && !strings.HasPrefix(results[i].Content, "Error:") {
			return results[i].Content, true
		}
	}
	return "", false
}

func emptyAnswer(finish string, afterTools bool) string {
	switch finish {
	case "length":
		return "(The model ran out of room before it could answer. Try asking for less at once.)"
	case "content_filter":
		return "(The model provider withheld this answer.)"
	}
	if afterTools {
		return "I finished the steps above, but the model gave no final answer. Ask me to sum up what I found, or try again."
	}
	return "(The model returned an empty answer.)"
}

// begin loads the thread and its history (repairing it where a crash left
// tool calls unanswered) and starts recording the user's message and the
// run. That write commits while the first model request is under way; every
// later write waits for it (see r.pending).
func (r *run) begin() error {
	a, in := r.a, r.in
	now := a.opts.Now()
	var msgs []*store.Message
	if a.opts.Ephemeral {
		r.thread = &store.Thread{ID: in.ThreadID, ChatKey: in.ChatKey, Created: now}
	}
	err := a.opts.Store.View(func(tx *store.Tx) error {
		if a.opts.Ephemeral {
			return nil
		}
		t, err := tx.Thread(in.ThreadID)
		if errors.Is(err, store.ErrNotFound) {
			t = &store.Thread{ID: in.ThreadID, ChatKey: in.ChatKey, Created: now}
		} else if err != nil {
			return err
		}
		r.thread = t
		if a.opts.DailyTokenBudget > 0 {
			if r.daily, err = readDaily(tx, in.ChatKey); err != nil {
				return err
			}
		}
		if cached, ok := a.history.get(in.ThreadID); ok {
			msgs = cached
			return nil
		}
		msgs, err = tx.Messages(in.ThreadID, t.SummarySeq)
		return err
	})
	if err != nil {
		return err
	}
	r.summary = r.thread.Summary
	if r.overBudget() {
		if in.OnBegin != nil { // the message is handled: by saying no
			r.write(in.OnBegin)
			if err := r.wait(); err != nil {
				return err
			}
		}
		return errBudget
	}
	name := in.Model
	if name == "" {
		name = r.thread.Model
	}
	r.model, _ = a.Model(name)
	r.ar.model = r.model.Name

	from, tail := repairHistory(msgs)
	repaired := from < len(msgs) || len(tail) > 0
	var fromSeq uint64 = 1
	if repaired {
		if from < len(msgs) {
			fromSeq = msgs[from].Seq
		} else if len(msgs) > 0 {
			fromSeq = msgs[len(msgs)-1].Seq + 1
		}
		a.log.InfoContext(r.ctx, "repairing thread history", "thread", in.ThreadID, "from_seq", fromSeq, "messages", len(tail))
		msgs = append(msgs[:from:from], tail...)
	}
	user := &store.Message{Role: "user", Content: in.Text, RunID: in.RunID, Time: now}
	r.userIdx = len(msgs)
	r.history = append(msgs, user)
	if a.opts.TurnContext != nil {
		r.turnCtx = strings.TrimSpace(a.opts.TurnContext(r.ctx, in))
	}
	r.thread.Updated = now
	r.rec = &store.Run{
		ID: in.RunID, ThreadID: in.ThreadID, ChatKey: in.ChatKey, Model: r.model.Name,
		Status: store.RunRunning, Started: now, MessageID: in.MessageID, UserID: in.UserID,
	}
	thread, rec := *r.thread, *r.rec
	r.write(func(tx *store.Tx) error {
		if repaired {
			if err := tx.ReplaceMessagesFrom(in.ThreadID, fromSeq, tail...); err != nil {
				return err
			}
		}
		if err := tx.AppendMessages(in.ThreadID, user); err != nil {
			return err
		}
		if in.OnBegin != nil {
			if err := in.OnBegin(tx); err != nil {
				return err
			}
		}
		cur, err := tx.Thread(in.ThreadID) // others may have changed it (title, model)
		if errors.Is(err, store.ErrNotFound) {
			cur = &thread
		} else if err != nil {
			return err
		}
		cur.Updated = thread.Updated
		if err := tx.PutThread(cur); err != nil {
			return err
		}
		rec.FirstSeq = user.Seq
		return tx.PutRun(&rec)
	})
	return nil
}

// write starts committing fn (grouped with other conversations' writes)
// after the run's previous write. wait returns the first error.
func (r *run) write(fn func(*store.Tx) error) {
	if r.a.opts.Ephemeral {
		return
	}
	prev := r.pending
	done := make(chan error, 1)
	r.pending = done
	go func() {
		if prev != nil {
			if err := <-prev; err != nil {
				done <- err
				return
			}
		}
		done <- r.a.opts.Store.Batch(fn)
	}()
}

// wait blocks until every write started so far has committed.
func (r *run) wait() error {
	if r.pending == nil {
		return nil
	}
	err := <-r.pending
	r.pending = nil
	if err != nil {
		r.a.history.forget(r.in.ThreadID)
		r.writeErr = err
		r.a.opts.Metrics.Error(metrics.ErrStore)
	}
	return err
}

// save appends msgs to the thread and updates the run record, durably.
func (r *run) save(msgs ...*store.Message) error {
	rec := *r.rec
	r.write(func(tx *store.Tx) error {
		if err := tx.AppendMessages(r.in.ThreadID, msgs...); err != nil {
			return err
		}
		return tx.PutRun(&rec)
	})
	if err := r.wait(); err != nil {
		return err
	}
	r.history = append(r.history, msgs...)
	return nil
}

// end starts recording the run's final status, with msgs appended in the
// same transaction. The caller waits (r.wait) when it needs the outcome.
func (r *run) end(status store.RunStatus, errText string, msgs ...*store.Message) {
	r.endWith(status, errText, nil, msgs...)
}

// endWith is end with also, when set, run in the same transaction.
func (r *run) endWith(status store.RunStatus, errText string, also func(*store.Tx) error, msgs ...*store.Message) {
	r.rec.Status = status
	r.rec.Ended = r.a.opts.Now()
	r.rec.Error = errText
	rec := *r.rec
	r.write(func(tx *store.Tx) error {
		if err := tx.AppendMessages(r.in.ThreadID, msgs...); err != nil {
			return err
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		if err := r.account(tx, rec.PromptTokens, rec.CompletionTokens); err != nil {
			return err
		}
		return tx.PutRun(&rec)
	})
	r.history = append(r.history, msgs...)
}

// finish delivers the answer while it is being committed; the run (and the
// thread's lock) ends only once the commit has landed.
func (r *run) finish(answer *store.Message, usage llm.Usage) {
	if r.writeErr != nil {
		r.fail(r.writeErr, "I couldn't save this conversation; please try again.")
		return
	}
	r.endWith(store.RunDone, "", func(tx *store.Tx) error {
		if r.a.opts.OnAnswer != nil {
			if err := r.a.opts.OnAnswer(tx, r.in, answer.Content); err != nil {
				return err
			}
		}
		if r.in.OnAnswer != nil {
			return r.in.OnAnswer(tx, answer.Content)
		}
		return nil
	}, answer)
	r.emit(Event{Kind: EventAnswer, Text: answer.Content, Model: r.model.Name, Usage: usage, Capped: r.capped})
	if err := r.wait(); err != nil {
		r.a.log.ErrorContext(r.ctx, "saving the answer failed after it was delivered", "thread", r.in.ThreadID, "err", err)
		return
	}
	r.a.history.put(r.in.ThreadID, r.history)
	if r.thread.Title == "" && !r.a.opts.Ephemeral {
		r.a.title(r.in.ThreadID, r.in.Text, answer.Content)
	}
}

func (r *run) fail(err error, userText string) {
	r.a.log.ErrorContext(r.ctx, "run failed", "thread", r.in.ThreadID, "err", err)
	r.a.history.forget(r.in.ThreadID)
	if r.rec != nil {
		r.end(store.RunError, err.Error())
		if serr := r.wait(); serr != nil && serr != err {
			r.a.log.ErrorContext(r.ctx, "recording failed run", "err", serr)
		}
	}
	r.emit(Event{Kind: EventError, Text: userText, Err: err})
}

func (r *run) stopped() {
	status, cause := store.RunCancelled, context.Cause(r.ctx)
	if !errors.Is(cause, ErrStopped) && !errors.Is(cause, context.Canceled) {
		status = store.RunInterrupted
	}
	r.end(status, "")
	if err := r.wait(); err != nil {
		r.a.log.ErrorContext(r.ctx, "recording stopped run", "err", err)
	} else {
		r.a.history.put(r.in.ThreadID, r.history)
	}
	r.emit(Event{Kind: EventStopped, Err: cause})
}
