package router

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/logctx"
	"github.com/deerflow/deerflow/progress"
	"github.com/deerflow/deerflow/store"
)

// conv is one conversation's routing state: its current thread, the run in
// progress and the messages waiting for it. Guarded by Router.mu.
type conv struct {
	key      string
	threadID string // "" until resolved from the store
	running  *item
	queue    []*item
	// answered: the running item's answer is being delivered; a new
	// message now is not "waiting behind" anything the user can see.
	answered bool
	tasks    []event.Task // the running item's unfinished subagent tasks
}

// item is one queued message, bound to the thread that was current when it
// arrived (a /new after it does not move it).
type item struct {
	in       *bus.Inbound
	threadID string
	seq      uint64 // its stored copy (store inbound queue); 0 if none
}

// conv returns the conversation for key, creating its routing state.
// Callers hold b.mu.
func (b *Router) convLocked(key string) *conv {
	c, ok := b.convs[key]
	if !ok {
		c = &conv{key: key}
		b.convs[key] = c
	}
	return c
}

// threadFor returns the conversation's current thread, creating one on
// first use.
func (b *Router) threadFor(key string) (string, error) {
	b.mu.Lock()
	c := b.convLocked(key)
	id := c.threadID
	b.mu.Unlock()
	if id != "" {
		return id, nil
	}
	err := b.opts.Store.Update(func(tx *store.Tx) error {
		var err error
		id, err = tx.ChatThread(key)
		if errors.Is(err, store.ErrNotFound) {
			id, err = b.newThreadTx(tx, key)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	if c.threadID == "" {
		c.threadID = id
	}
	id = c.threadID
	b.mu.Unlock()
	return id, nil
}

func (b *Router) newThreadTx(tx *store.Tx, key string) (string, error) {
	now := b.opts.Now()
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

// enqueue stores in (after saving its files), adds it to its
// conversation's queue and makes sure a worker runs it. It returns once the
// message is durable.
func (b *Router) enqueue(ctx context.Context, in *bus.Inbound) error {
	key := in.ChatKey()
	threadID, err := b.threadFor(key)
	if errors.Is(err, store.ErrDamaged) { // quarantined: told, not redelivered
		b.log.Error("resolving thread: the conversation is damaged", "chat", key, "err", err)
		return b.reply(ctx, in, DamagedChatText)
	}
	if err != nil {
		b.log.Error("resolving thread", "chat", key, "err", err)
		b.reply(ctx, in, "I couldn't open this conversation's history; please try again.")
		return err
	}
	b.mu.Lock()
	closed, waiting := b.closed, len(b.convLocked(key).queue)
	b.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if waiting >= b.opts.MaxQueued {
		return b.reply(ctx, in, fmt.Sprintf("I already have %d messages waiting in this conversation, so I didn't take this one. Send it again once I've caught up, or /stop to cancel the current work.", waiting))
	}
	seq, dup, err := b.record(in, true)
	if err != nil || dup {
		return err
	}
	if ahead := b.push(in, threadID, seq); ahead > 0 {
		return b.reply(ctx, in, fmt.Sprintf("Queued: I'll answer this when I'm done with the current message (%d waiting).", ahead))
	}
	return nil
}

// push queues a stored message and starts the conversation's worker if
// needed. It returns how many messages now wait in front of the current
// run's end, 0 when this one runs now (or right after an answer the user
// has already seen).
func (b *Router) push(in *bus.Inbound, threadID string, seq uint64) int {
	b.mu.Lock()
	if seq != 0 {
		if b.live[seq] {
			b.mu.Unlock()
			return 0 // already queued or running here
		}
		b.live[seq] = true
	}
	c := b.convLocked(in.ChatKey())
	c.queue = append(c.queue, &item{in: in, threadID: threadID, seq: seq})
	start := c.running == nil && len(c.queue) == 1
	ahead := len(c.queue)
	if c.answered && len(c.queue) == 1 {
		ahead = 0
	}
	if start {
		c.running = c.queue[0]
		c.queue = c.queue[1:]
		b.workers++
		ahead = 0
	}
	b.mu.Unlock()
	if start {
		go b.work(c)
	}
	return ahead
}

// work runs the conversation's queue until it is empty.
func (b *Router) work(c *conv) {
	for {
		b.mu.Lock()
		it := c.running
		b.mu.Unlock()

		b.runItem(c, it)

		b.mu.Lock()
		delete(b.live, it.seq)
		if len(c.queue) == 0 || b.closed {
			c.running = nil
			c.answered = false
			b.workers--
			b.idle.Broadcast()
			b.mu.Unlock()
			return
		}
		c.running = c.queue[0]
		c.queue = c.queue[1:]
		c.answered = false
		b.mu.Unlock()
	}
}

// runItem runs one message through the agent and delivers what it says.
func (b *Router) runItem(c *conv, it *item) {
	in := it.in
	runID := agent.NewID("run_")
	// The delivery's lines name the run, like the agent's own.
	ctx := logctx.With(context.Background(), slog.String("run", runID))
	d := b.delivery(ctx, c, in, it.threadID, runID)
	defer d.Close()
	if len(in.Files) > 0 {
		// The files are fetched when the message's turn comes (it was
		// stored with their references, before the platform was told).
		b.reattach(in)
		b.saveUploads(ctx, in, it.threadID)
		if in.Text == "" { // only files, and none could be saved
			b.forgetInbound([]*item{it})
			return
		}
	}
	var onBegin func(*store.Tx) error
	if it.seq != 0 {
		onBegin = func(tx *store.Tx) error { return tx.DeleteInbound(it.seq) }
	}
	ain := agent.Input{
		RunID:     runID,
		ThreadID:  it.threadID,
		ChatKey:   in.ChatKey(),
		UserID:    in.Channel + ":" + in.UserID,
		Text:      in.Text,
		Skill:     in.Skill,
		OnBegin:   onBegin,
		OnAnswer:  d.AnswerTx(),
		MessageID: in.MessageID,
	}
	run := b.opts.Agent.Run
	if mode := b.researchMode(in, it.threadID, &ain); mode != "" {
		run = func(ctx context.Context, ain agent.Input) iter.Seq[event.Event] {
			return b.opts.Research.Run(ctx, mode, ain)
		}
	}
	damaged := false
	for ev := range run(context.Background(), ain) {
		if e, ok := ev.(event.Error); ok && errors.Is(e.Err, store.ErrDamaged) {
			damaged = true
		}
		d.Handle(ctx, ev)
	}
	d.Settle()
	if damaged && it.seq != 0 {
		b.forgetInbound([]*item{it}) // the user was told; never replayed
	}
}

// delivery starts the rendering of a run of c (it answers in), which keeps
// c's state for /status: whether the answer is going out, the unfinished
// subagent tasks.
func (b *Router) delivery(ctx context.Context, c *conv, in *bus.Inbound, threadID, runID string) *progress.Delivery {
	return progress.New(ctx, in, progress.Options{
		Outbox:   b.out,
		Store:    b.opts.Store,
		Logger:   b.log,
		Now:      b.opts.Now,
		ThreadID: threadID,
		RunID:    runID,
		OnFinal: func() {
			b.mu.Lock()
			c.answered = true
			b.mu.Unlock()
		},
		OnTask: func(t event.Task, done bool) { b.trackTask(c, t, done) },
		OnTasksEnd: func() {
			b.mu.Lock()
			c.tasks = nil
			b.mu.Unlock()
		},
	})
}

// researchMode says whether a message goes to the research rather than the
// lead agent, and how: "" for the lead. A /retry of "/research topic"
// that cannot resume starts that research again (ain.Text is the topic).
func (b *Router) researchMode(in *bus.Inbound, threadID string, ain *agent.Input) string {
	rs := b.opts.Research
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
