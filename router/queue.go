package router

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/agents"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/logctx"
	"github.com/deerflow/deerflow/progress"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// conv is one conversation's routing state: its current thread and the
// unfinished subagent tasks of its run, for /status. Guarded by
// Router.mu. Its runs are the runner's (runner.Conv).
type conv struct {
	key      string
	threadID string       // "" until resolved from the store
	tasks    []event.Task // the running run's unfinished subagent tasks
	subs     subagentSum  // the latest run's finished subagent tasks
}

// conv returns the conversation for key, creating its routing state.
// Callers hold r.mu.
func (r *Router) convLocked(key string) *conv {
	c, ok := r.convs[key]
	if !ok {
		c = &conv{key: key}
		r.convs[key] = c
	}
	return c
}

// threadFor returns the conversation's current thread, creating one on
// first use.
func (r *Router) threadFor(key string) (string, error) {
	r.mu.Lock()
	c := r.convLocked(key)
	id := c.threadID
	r.mu.Unlock()
	if id != "" {
		return id, nil
	}
	err := r.opts.Store.Update(func(tx *store.Tx) error {
		var err error
		id, err = tx.ChatThread(key)
		if errors.Is(err, store.ErrNotFound) {
			id, err = r.newThreadTx(tx, key)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	if c.threadID == "" {
		c.threadID = id
	}
	id = c.threadID
	r.mu.Unlock()
	return id, nil
}

func (r *Router) newThreadTx(tx *store.Tx, key string) (string, error) {
	now := r.opts.Now()
	t := &store.Thread{ID: agent.NewID("th_"), ChatKey: key, Created: now, Updated: now}
	if err := tx.PutThread(t); err != nil {
		return "", err
	}
	return t.ID, tx.SetChatThread(key, t.ID)
}

// DamagedChatText is what a chat is told when its own record (which
// conversation it is in) is damaged: unlike a damaged history, /new cannot
// start over until the database is repaired, so it says so.
const DamagedChatText = "This chat's stored record is damaged and can't be read, so I can't answer here until the database is repaired (deerflow doctor --repair). Other chats are not affected."

// errDuplicate: the message's platform event was accepted before.
var errDuplicate = errors.New("router: a redelivered event")

// enqueue submits in to the runner as a run of its conversation, bound to
// the conversation's current thread (a /new after it does not move it).
// Its event id and message id are recorded in the commit that stores it.
// It returns once the message is durable.
func (r *Router) enqueue(ctx context.Context, in *bus.Inbound) error {
	key := in.ChatKey()
	threadID, err := r.threadFor(key)
	if errors.Is(err, store.ErrDamaged) { // quarantined: told, not redelivered
		r.log.Error("resolving thread: the conversation is damaged", "chat", key, "err", err)
		return r.reply(ctx, in, DamagedChatText)
	}
	if err != nil {
		r.log.Error("resolving thread", "chat", key, "err", err)
		r.reply(ctx, in, "I couldn't open this conversation's history; please try again.")
		return err
	}
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	// The run gets the message itself, with its attachments' Open; one
	// resumed after a restart decodes it from the request.
	id := agent.NewID("run_")
	r.slot(id).in = in
	tk, err := r.opts.Runner.Submit(runner.Request{
		ID: id, Conv: key, ThreadID: threadID, Origin: runner.OriginChat, ChatKey: key,
		User: in.Channel + ":" + in.UserID, Text: in.Text, Skill: in.Skill, MessageID: in.MessageID,
		Data: data, Strategy: runner.Enqueue,
		// A plain message goes straight to the agent, whose first step is
		// its begin commit; files are fetched, and research may resume,
		// before that.
		BeginsAtOnce: len(in.Files) == 0 && in.Research == "",
		Also: func(tx *store.Tx) error {
			if dup, err := r.recordTx(tx, in); err != nil || dup {
				return cmp.Or(err, errDuplicate)
			}
			return nil
		},
	})
	if err != nil {
		r.dropSlot(id)
	}
	return r.submitted(ctx, in, tk, err)
}

// submitted tells the person what became of their message.
func (r *Router) submitted(ctx context.Context, in *bus.Inbound, tk runner.Ticket, err error) error {
	var full *runner.FullError
	switch {
	case errors.Is(err, errDuplicate):
		r.log.Info("dropped a redelivered message", "chat", in.ChatKey(), "event", in.EventKey)
		return nil
	case errors.Is(err, runner.ErrClosed):
		return ErrClosed
	case errors.As(err, &full):
		return r.reply(ctx, in, fmt.Sprintf("I'm busy: %d messages already wait in this conversation, so I didn't take this one. Send it again once I've caught up, or /stop to cancel the current work.", full.Waiting))
	case err != nil:
		r.log.Error("accepting message", "chat", in.ChatKey(), "err", err)
		return errors.Join(errors.New("router: message not stored"), err)
	}
	if tk.Ahead > 0 {
		return r.reply(ctx, in, fmt.Sprintf("Queued: I'll answer this when I'm done with the current message (%d waiting).", tk.Ahead))
	}
	return nil
}

// slot is a chat run between the message that started it and its
// rendering: the message itself (with its attachments' Open) when it was
// published in this process, and the run's delivery once it began.
type slot struct {
	in  *bus.Inbound
	ctx context.Context // names the run in logs
	d   *progress.Delivery
}

func (r *Router) slot(id string) *slot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.slots[id]
	if !ok {
		s = &slot{}
		r.slots[id] = s
	}
	return s
}

func (r *Router) dropSlot(id string) {
	r.mu.Lock()
	delete(r.slots, id)
	r.mu.Unlock()
}

// observe renders a chat run's events in its conversation, on the run's
// own goroutine (runner.Handler.Observe): the next run of the
// conversation starts only once this one's answer is shown.
func (r *Router) observe(run *runner.Run, ev event.Event) {
	r.mu.Lock()
	sl := r.slots[run.ID()]
	r.mu.Unlock()
	switch ev.(type) {
	case event.Began, event.RolledBack:
	case event.Ended:
		r.dropSlot(run.ID())
		if sl != nil && sl.d != nil {
			sl.d.Settle()
			sl.d.Close()
		}
	default:
		if sl != nil && sl.d != nil {
			sl.d.Handle(sl.ctx, ev)
		}
	}
}

// execute is the chat's engine (runner.Handler.Engine): the message's
// files are saved into the thread's uploads when its turn comes, then it
// goes to the research when the thread's research waits for it, else to
// the lead agent.
func (r *Router) execute(ctx context.Context, run *runner.Run) iter.Seq[event.Event] {
	return func(yield func(event.Event) bool) {
		sl := r.slot(run.ID())
		in := sl.in
		if in == nil {
			in = new(bus.Inbound)
			if err := json.Unmarshal(run.Req.Data, in); err != nil {
				r.log.Error("a stored message is unreadable; dropping it", "run", run.ID(), "err", err)
				return
			}
		}
		threadID := run.Req.ThreadID
		lctx := logctx.With(r.ctx, slog.String("run", run.ID()))
		d := r.delivery(lctx, in, threadID, run.ID(), "")
		r.mu.Lock()
		sl.ctx, sl.d = lctx, d
		r.mu.Unlock()
		if len(in.Files) > 0 {
			// The files are fetched when the message's turn comes (it was
			// stored with their references, before the platform was told).
			r.reattach(in)
			r.saveUploads(lctx, in, threadID, d)
			if in.Text == "" { // only files, and none could be saved or heard
				return
			}
		}
		ain := run.Input()
		ain.Text, ain.OnAnswer = in.Text, d.AnswerTx()
		if r.opts.Agents != nil {
			ain.Persona = r.opts.Agents.Persona(in)
			if ain.Skill != "" && !agents.SkillAllowed(ain.Persona, ain.Skill) {
				r.reply(lctx, in, fmt.Sprintf("The %s agent doesn't use the %s skill; it answers without it.", ain.Persona.Name, ain.Skill))
				ain.Skill = ""
			}
		}
		r.gatePlan(&ain)
		src := r.opts.Agent.Run
		if mode := r.researchMode(in, threadID, &ain); mode != "" {
			src = func(ctx context.Context, ain agent.Input) iter.Seq[event.Event] {
				return r.opts.Research.Run(ctx, mode, ain)
			}
		}
		for ev := range src(ctx, ain) {
			if !yield(ev) {
				return
			}
		}
	}
}

// delivery starts the rendering of a run that answers in; the run's
// subagent tasks are kept for /status.
func (r *Router) delivery(ctx context.Context, in *bus.Inbound, threadID, runID string, restartText string) *progress.Delivery {
	r.mu.Lock()
	c := r.convLocked(in.ChatKey())
	r.mu.Unlock()
	return progress.New(ctx, in, progress.Options{
		RestartText: restartText,
		Outbox:      r.out,
		Store:       r.opts.Store,
		Logger:      r.log,
		Now:         r.opts.Now,
		ThreadID:    threadID,
		RunID:       runID,
		OnTask:      func(t event.Task, done bool) { r.trackTask(c, threadID, runID, t, done) },
		OnTasksEnd: func() {
			r.mu.Lock()
			c.tasks = nil
			r.mu.Unlock()
		},
	})
}

// researchMode says whether a message goes to the research rather than the
// lead agent, and how: "" for the lead. A /retry of "/research topic"
// that cannot resume starts that research again (ain.Text is the topic).
func (r *Router) researchMode(in *bus.Inbound, threadID string, ain *agent.Input) string {
	rs := r.opts.Research
	if rs == nil || in.Skill != "" {
		return ""
	}
	switch in.Research {
	case "start", "auto":
		return in.Research
	case "retry":
		if rs.Pending(threadID) { // the reply was not taken (a failed revision): again
			return "reply"
		}
		if rs.Resumable(threadID) {
			return "resume"
		}
		if name, args, ok := parseCommand(in.Text); ok && name == "research" {
			if mode, topic := researchArgs(args); topic != "" {
				ain.Text = topic
				return mode
			}
		}
		return ""
	}
	if rs.Pending(threadID) {
		return "reply"
	}
	return ""
}
