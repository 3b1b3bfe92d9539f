package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"

	"github.com/deerflow/deerflow/agent/message"
	"github.com/deerflow/deerflow/agent/tokens"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/logctx"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// Run runs one user turn on in.ThreadID and streams what happens. The
// sequence always ends with exactly one event.Answer, event.Error or
// event.Stopped (whose Err is ErrStopped after Stop). Stopping the
// iteration early cancels the run. A caller that needs the run's id sets
// in.RunID (NewID("run_")); it is assigned when empty.
//
// The thread is persisted after every step, so a crash at any point leaves
// a history the next run can continue from (see repair.History).
func (a *Agent) Run(ctx context.Context, in Input) iter.Seq[event.Event] {
	return func(yield func(event.Event) bool) {
		if in.RunID == "" {
			in.RunID = NewID("run_")
		}
		if !a.opts.Ephemeral {
			// Every line logged with the run's context names it (a
			// subagent's lines name its lead's run and its task).
			ctx = logctx.With(ctx, slog.String("run", in.RunID))
		}
		if p := in.Persona; p != nil && p.Name != "" {
			ctx = logctx.With(ctx, slog.String("agent", p.Name))
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		ar := &activeRun{id: in.RunID, started: a.opts.Now(), cancel: cancel, done: make(chan struct{})}
		if !a.acquire(in.ThreadID, ar) {
			yield(event.Error{Text: "I'm still working on the previous message in this conversation.", Err: ErrThreadBusy})
			return
		}
		defer a.release(in.ThreadID, ar)
		r := &run{a: a, in: &in, ctx: ctx, cancel: cancel, yield: yield, ar: ar}
		r.scope = &RunScope{reset: func() { r.emit(event.TextReset{}) }}
		r.measure()
	}
}

// run is the state of one Run.
type run struct {
	a      *Agent
	in     *Input
	ctx    context.Context
	cancel context.CancelCauseFunc
	yield  func(event.Event) bool
	ar     *activeRun
	scope  *RunScope // the run as its model wrappers see it
	gone   bool      // the consumer stopped iterating
	capped bool      // the run reached MaxTurns

	allowed []string     // the only tools of this run; nil: all
	loaded  sync.Map     // deferred tools loaded (tools.Env.Load) → true
	usage   llm.Usage    // the run's tokens so far
	nudge   string       // a hidden note for the next model call only
	images  []llm.Image  // attached to the next model call only
	summary string       // the thread's summary, given before its messages
	daily   tokens.Daily // the conversation's tokens today (budget)
	userIdx int          // the run's user message in history
	turnCtx string       // TurnContext's text, given with it
	system  string       // the system prompt, built at the first model call
	outcome string       // how the run ended, for the metrics (noteEnd)
	gate    bool         // the begin commit must land before the next event (see exec)

	thread  *store.Thread
	model   ModelRef
	history []*store.Message
	rec     *store.Run

	pending  chan error // the last write started, until waited for
	writeErr error      // a write that failed
}

// emit hands ev to the consumer. Only the run's own goroutine calls it.
func (r *run) emit(ev event.Event) {
	if r.gone {
		return
	}
	if _, started := ev.(event.Started); r.gate && !started {
		r.gate = false
		r.wait() // an error is kept in writeErr: the answer becomes a failure
	}
	r.noteEnd(ev)
	if !r.yield(ev) {
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
		r.failBegin(err)
		return
	}
	// The message leaves its intake queue in the begin commit. The model
	// is asked while it lands, but nothing the person can see (text, a
	// tool call, an answer) comes out before it has: after a crash, a
	// message either shows nothing of its run and runs again, or is known
	// to have started (and is reported interrupted), never both.
	r.gate = r.in.OnBegin != nil
	r.emit(event.Started{Model: r.model.Name})
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
	var p progress
	for turn := 1; turn <= r.a.opts.MaxTurns; turn++ {
		specs := toolSpecs(r.a.opts.Tools, func(n string) bool { return r.usable(n) && !r.deferred(n) }, r.model.Vision)
		if r.step(toolCtx, turn, specs, &p) {
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

// failBegin ends a run that could not begin.
func (r *run) failBegin(err error) {
	switch {
	case errors.Is(err, errBudget):
		r.emit(event.Error{Text: r.budgetText(), Err: err})
	case errors.Is(err, store.ErrDamaged): // quarantined: see DamagedText
		r.fail(err, DamagedText)
	default:
		r.fail(err, "I couldn't load this conversation; please try again.")
	}
}

// progress is what the turns of a run remember of each other.
type progress struct {
	toolRounds int  // turns that ran tool calls
	retried    bool // an empty answer after tool calls was asked again
}

// step is one turn of the run: a model call and, when the model asks for
// them, its tool calls. It reports whether the run ended.
func (r *run) step(toolCtx context.Context, turn int, specs []llm.ToolSpec, p *progress) bool {
	if err := r.compact(); err != nil {
		if r.ctx.Err() != nil {
			r.stopped()
			return true
		}
		r.a.log.WarnContext(r.ctx, "summarizing the conversation failed; going on without", "thread", r.in.ThreadID, "err", err)
	}
	resp, err := r.ask(turn, specs)
	if err != nil {
		if r.ctx.Err() != nil {
			r.stopped()
			return true
		}
		if le, ok := errors.AsType[*llm.Error](err); ok && strings.TrimSpace(le.Partial) != "" {
			r.failPartial(err, le)
			return true
		}
		r.fail(err, llm.UserMessage(err))
		return true
	}
	msg := message.FromLLM(&resp.Message, r.in.RunID, r.a.opts.Now())
	if resp.FinishReason == "length" && len(msg.ToolCalls) == 0 && strings.TrimSpace(msg.Content) != "" {
		// The answer is shown as far as it got, and says so.
		r.emit(event.TextDelta{Text: cutNote})
		msg.Content += cutNote
	}
	if calls := resp.Message.ToolCalls; len(calls) > 0 {
		return r.act(toolCtx, turn, msg, calls, p)
	}
	if strings.TrimSpace(msg.Content) == "" && p.toolRounds > 0 && !p.retried && resp.FinishReason != "length" && resp.FinishReason != "content_filter" {
		// An empty answer after tool calls: ask once more.
		p.retried = true
		r.nudge = "(Your last reply was empty. Write your final answer to the user now, based on the results above.)"
		r.emit(event.TextReset{})
		return false
	}
	if strings.TrimSpace(msg.Content) == "" {
		msg.Content = emptyAnswer(resp.FinishReason, p.toolRounds > 0)
	}
	r.finish(msg, r.usage)
	return true
}

// ask makes the turn's model call through the middleware chain and counts
// its tokens.
func (r *run) ask(turn int, specs []llm.ToolSpec) (*llm.Response, error) {
	req := &llm.Request{
		Model:       r.model.ID,
		Messages:    r.messages(),
		Tools:       specs,
		MaxTokens:   r.model.MaxTokens,
		Temperature: r.model.Temperature,
	}
	resp, err := r.a.chain.callModel(r.ctx, r.scope, req, r.callModel)
	r.images, r.nudge = nil, "" // given to this call only
	if err != nil {
		return nil, err
	}
	r.usage.PromptTokens += resp.Usage.PromptTokens
	r.usage.CompletionTokens += resp.Usage.CompletionTokens
	r.usage.TotalTokens += resp.Usage.TotalTokens
	r.usage.ReasoningTokens += resp.Usage.ReasoningTokens
	r.usage.CachedTokens += resp.Usage.CachedTokens
	r.rec.Turns = turn
	r.rec.PromptTokens, r.rec.CompletionTokens = r.usage.PromptTokens, r.usage.CompletionTokens
	return resp, nil
}

// act stores the model's tool-calling message msg, runs its calls and
// stores their results. It reports whether the run ended (it failed or
// stopped, or a call ended it).
func (r *run) act(toolCtx context.Context, turn int, msg *store.Message, calls []llm.ToolCall, p *progress) bool {
	if err := r.save(msg); err != nil {
		r.fail(err, "I couldn't save this conversation; please try again.")
		return true
	}
	results := r.runTools(toolCtx, turn, calls)
	p.toolRounds++
	if err := r.save(results...); err != nil {
		r.fail(err, "I couldn't save this conversation; please try again.")
		return true
	}
	if r.ctx.Err() != nil {
		r.stopped()
		return true
	}
	if text, ok := r.ending(calls, results); ok {
		// A tool that ends the run (ask_clarification): its result is
		// what the person reads, and their next message answers it.
		r.outcome = metrics.Clarification
		r.finish(&store.Message{Role: "assistant", Content: text, RunID: r.in.RunID, Time: r.a.opts.Now()}, r.usage)
		return true
	}
	return false
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
		r.a.history.Forget(r.in.ThreadID)
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
	r.emit(event.Answer{Text: answer.Content, Usage: usageEvent(usage, r.model.Price), Capped: r.capped})
	if err := r.wait(); err != nil {
		r.a.log.ErrorContext(r.ctx, "saving the answer failed after it was delivered", "thread", r.in.ThreadID, "err", err)
		return
	}
	r.a.history.Put(r.in.ThreadID, r.history)
	if r.thread.Title == "" && !r.a.opts.Ephemeral {
		r.a.title(r.in.ThreadID, r.in.Text, answer.Content)
	}
}

func (r *run) fail(err error, userText string) {
	r.failWith(err, userText)
}

// cutNote ends an answer the model's output length limit cut short.
const cutNote = "\n\n…(answer cut at the length limit)"

// failPartial ends a run whose model failed after part of its answer was
// shown. The part stays in the thread, marked as cut, and the person is
// told why: in the provider's words when it sent an error, else with the
// sentence for what went wrong (a timeout, a cut stream).
func (r *run) failPartial(err error, le *llm.Error) {
	text := llm.UserMessage(err)
	if why := strings.Join(strings.Fields(le.ProviderMessage), " "); why != "" {
		why = strings.TrimRight(tools.Clip(why, 200), ". ")
		text = "The model stopped with an error: " + why + ". Send /retry to try again."
	}
	kept := &store.Message{
		Role:    "assistant",
		Content: le.Partial + "\n\n(The answer stopped here: the model failed with an error.)",
		RunID:   r.in.RunID,
		Time:    r.a.opts.Now(),
	}
	r.failWith(err, text, kept)
}

// failWith ends the run as failed, appending msgs to the thread.
func (r *run) failWith(err error, userText string, msgs ...*store.Message) {
	r.a.log.ErrorContext(r.ctx, "run failed", "thread", r.in.ThreadID, "err", err)
	r.a.history.Forget(r.in.ThreadID)
	if r.rec != nil {
		r.end(store.RunError, err.Error(), msgs...)
		if serr := r.wait(); serr != nil && serr != err {
			r.a.log.ErrorContext(r.ctx, "recording failed run", "err", serr)
		}
	}
	r.emit(event.Error{Text: userText, Err: err})
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
		r.a.history.Put(r.in.ThreadID, r.history)
	}
	r.emit(event.Stopped{Err: cause})
}
