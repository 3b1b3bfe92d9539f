package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/deerflow/deerflow/llm"
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
		r.exec()
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

	thread  *store.Thread
	model   ModelRef
	history []*store.Message
	rec     *store.Run
}

// emit hands ev to the consumer. Only the run's own goroutine calls it.
func (r *run) emit(ev Event) {
	if r.gone {
		return
	}
	ev.RunID, ev.ThreadID = r.in.RunID, r.in.ThreadID
	var err error
	if ev.Kind == EventError {
		err = ev.Err
	}
	if !r.yield(ev, err) {
		r.gone = true
		r.cancel(context.Canceled)
	}
}

func (r *run) exec() {
	if err := r.begin(); err != nil {
		r.fail(err, "I couldn't load this conversation; please try again.")
		return
	}
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
	var usage llm.Usage
	specs := toolSpecs(r.a.opts.Tools)
	for turn := 1; turn <= r.a.opts.MaxTurns; turn++ {
		req := &llm.Request{
			Model:       r.model.ID,
			Messages:    r.messages(),
			Tools:       specs,
			MaxTokens:   r.model.MaxTokens,
			Temperature: r.model.Temperature,
		}
		resp, err := r.a.chain.callModel(withStream(r.ctx, r), req, r.callModel)
		if err != nil {
			if r.ctx.Err() != nil {
				r.stopped()
				return
			}
			r.fail(err, llm.UserMessage(err))
			return
		}
		usage.PromptTokens += resp.Usage.PromptTokens
		usage.CompletionTokens += resp.Usage.CompletionTokens
		usage.TotalTokens += resp.Usage.TotalTokens
		r.rec.Turns = turn
		r.rec.PromptTokens, r.rec.CompletionTokens = usage.PromptTokens, usage.CompletionTokens

		msg := fromLLM(&resp.Message, r.in.RunID, r.a.opts.Now())
		calls := resp.Message.ToolCalls
		if len(calls) == 0 {
			if msg.Content == "" {
				msg.Content = emptyAnswer(resp.FinishReason)
			}
			r.finish(msg, usage)
			return
		}
		if err := r.save(msg); err != nil {
			r.fail(err, "I couldn't save this conversation; please try again.")
			return
		}
		results := r.runTools(toolCtx, calls)
		if err := r.save(results...); err != nil {
			r.fail(err, "I couldn't save this conversation; please try again.")
			return
		}
		if r.ctx.Err() != nil {
			r.stopped()
			return
		}
	}
	r.finish(&store.Message{
		Role:    "assistant",
		Content: fmt.Sprintf("I stopped after %d steps, the limit for one request. Say \"continue\" and I'll carry on from here.", r.a.opts.MaxTurns),
		RunID:   r.in.RunID,
		Time:    r.a.opts.Now(),
	}, usage)
}

func emptyAnswer(finish string) string {
	switch finish {
	case "length":
		return "(The model ran out of room before it could answer. Try asking for less at once.)"
	case "content_filter":
		return "(The model provider withheld this answer.)"
	}
	return "(The model returned an empty answer.)"
}

// begin loads the thread, repairs its history, records the user's message
// and the run, all in one transaction.
func (r *run) begin() error {
	a, in := r.a, r.in
	now := a.opts.Now()
	return a.opts.Store.Update(func(tx *store.Tx) error {
		t, err := tx.Thread(in.ThreadID)
		if errors.Is(err, store.ErrNotFound) {
			t = &store.Thread{ID: in.ThreadID, ChatKey: in.ChatKey, Created: now}
		} else if err != nil {
			return err
		}
		name := in.Model
		if name == "" {
			name = t.Model
		}
		r.model, _ = a.Model(name)
		r.ar.model = r.model.Name

		msgs, err := tx.Messages(in.ThreadID, 0)
		if err != nil {
			return err
		}
		if from, tail := repairHistory(msgs); from < len(msgs) || len(tail) > 0 {
			var fromSeq uint64 = 1
			if from < len(msgs) {
				fromSeq = msgs[from].Seq
			} else if len(msgs) > 0 {
				fromSeq = msgs[len(msgs)-1].Seq + 1
			}
			if err := tx.ReplaceMessagesFrom(in.ThreadID, fromSeq, tail...); err != nil {
				return err
			}
			a.log.Info("repaired thread history", "thread", in.ThreadID, "from_seq", fromSeq, "messages", len(tail))
			msgs = append(msgs[:from:from], tail...)
		}
		user := &store.Message{Role: "user", Content: in.Text, RunID: in.RunID, Time: now}
		if err := tx.AppendMessages(in.ThreadID, user); err != nil {
			return err
		}
		r.history = append(msgs, user)
		t.Updated = now
		if err := tx.PutThread(t); err != nil {
			return err
		}
		r.thread = t
		r.rec = &store.Run{
			ID: in.RunID, ThreadID: in.ThreadID, ChatKey: in.ChatKey, Model: r.model.Name,
			Status: store.RunRunning, Started: now, FirstSeq: user.Seq,
		}
		return tx.PutRun(r.rec)
	})
}

// save appends msgs to the thread and updates the run record.
func (r *run) save(msgs ...*store.Message) error {
	err := r.a.opts.Store.Update(func(tx *store.Tx) error {
		if err := tx.AppendMessages(r.in.ThreadID, msgs...); err != nil {
			return err
		}
		return tx.PutRun(r.rec)
	})
	if err == nil {
		r.history = append(r.history, msgs...)
	}
	return err
}

// end records the run's final status, with msgs appended in the same
// transaction.
func (r *run) end(status store.RunStatus, errText string, msgs ...*store.Message) error {
	r.rec.Status = status
	r.rec.Ended = r.a.opts.Now()
	r.rec.Error = errText
	return r.save(msgs...)
}

func (r *run) finish(answer *store.Message, usage llm.Usage) {
	if err := r.end(store.RunDone, "", answer); err != nil {
		r.fail(err, "I couldn't save this conversation; please try again.")
		return
	}
	r.emit(Event{Kind: EventAnswer, Text: answer.Content, Model: r.model.Name, Usage: usage})
}

func (r *run) fail(err error, userText string) {
	r.a.log.Error("run failed", "run", r.in.RunID, "thread", r.in.ThreadID, "err", err)
	if r.rec != nil {
		if serr := r.end(store.RunError, err.Error()); serr != nil {
			r.a.log.Error("recording failed run", "run", r.in.RunID, "err", serr)
		}
	}
	r.emit(Event{Kind: EventError, Text: userText, Err: err})
}

func (r *run) stopped() {
	status, cause := store.RunCancelled, context.Cause(r.ctx)
	if !errors.Is(cause, ErrStopped) && !errors.Is(cause, context.Canceled) {
		status = store.RunInterrupted
	}
	if err := r.end(status, ""); err != nil {
		r.a.log.Error("recording stopped run", "run", r.in.RunID, "err", err)
	}
	r.emit(Event{Kind: EventStopped, Err: cause})
}

// messages is the model's view of the thread: the system prompt, then the
// history.
func (r *run) messages() []llm.Message {
	out := make([]llm.Message, 0, len(r.history)+1)
	out = append(out, llm.Message{Role: llm.RoleSystem, Content: r.a.prompt.Build(r.ctx, r.in)})
	for _, m := range r.history {
		out = append(out, toLLM(m))
	}
	return out
}

// callModel is the innermost ModelNext: it streams from the model, passing
// deltas on as events.
func (r *run) callModel(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	for c, err := range r.model.Model.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		switch {
		case c.Text != "":
			r.emit(Event{Kind: EventTextDelta, Text: c.Text})
		case c.Reasoning != "":
			r.emit(Event{Kind: EventReasoningDelta, Text: c.Reasoning})
		case c.Done != nil:
			return c.Done, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, &llm.Error{Kind: llm.KindTruncated, Err: errors.New("stream ended without a final chunk")}
}

type streamKey struct{}

func withStream(ctx context.Context, r *run) context.Context {
	return context.WithValue(ctx, streamKey{}, r)
}

// resetStream tells the run's watchers to discard the text streamed by a
// model call that is about to be retried.
func resetStream(ctx context.Context) {
	if r, ok := ctx.Value(streamKey{}).(*run); ok {
		r.emit(Event{Kind: EventTextReset})
	}
}

func toolSpecs(reg *tools.Registry) []llm.ToolSpec {
	specs := reg.Specs()
	out := make([]llm.ToolSpec, len(specs))
	for i, s := range specs {
		out[i] = llm.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
	}
	return out
}
