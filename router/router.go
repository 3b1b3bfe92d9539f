// Package router routes a person's messages to the agent. Channels
// Publish bus.Inbound messages (bus.Publisher); the router resolves each
// conversation (channel:chat[:topic]) to an agent thread, handles
// commands, queues text per conversation (one run at a time, in order)
// and runs it, leaving the rendering of each run to progress and the
// durable sends to outbox.
//
// It imports bus, outbox, progress, agent, event and store; never
// channels.
package router

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/agents"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/choice"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/outbox"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// Options configures a Router.
type Options struct {
	Store   *store.Store   // required
	Agent   *agent.Agent   // required
	Runner  *runner.Runner // required: New registers the chat's handler
	Logger  *slog.Logger   // nil: slog.Default()
	Version string         // shown by /status
	Now     func() time.Time
	// SaveUpload stores an attachment in the thread's uploads (converting
	// or transcribing it) and describes it. Its error text is shown to
	// the sender after the file's name, so it must read as a short clause
	// ("it is larger than the upload limit of 50 MB"). Nil: attachments
	// are refused politely.
	SaveUpload func(ctx context.Context, threadID string, a bus.Attachment) (Upload, error)
	// UploadsNote tells the model which files arrived with a message,
	// given each one's Upload.Line. Nil: a plain list.
	UploadsNote func(lines []string) string
	// Agents are the named agents (/agent, who answers a conversation);
	// nil: only the built-in one.
	Agents *agents.Registry
	// Memory answers /memory; nil means long-term memory is off.
	Memory Memory
	// Skills routes "/<skill> task" and answers /skills; nil: no skills.
	Skills Skills
	// Reopen finds a presented file again for a delivery retried after a
	// restart; nil: such files are not sent again.
	Reopen outbox.Reopener
	// Research runs /research; nil: the command is off.
	Research Research
	// Health gives /status lines about the service's parts that are
	// degraded (a sandbox without network, an MCP server down), each
	// one sentence ("Sandbox network: none: …"); nil or none: nothing.
	Health func() []string
	// Schedules answers /schedules and /unschedule and learns how
	// scheduled runs ended; nil: scheduled tasks are off (their runs are
	// still shown).
	Schedules Schedules
	// Plan answers /plan and /goal, adds their /status lines, and says
	// whether a conversation's runs may keep a checklist (write_todos);
	// nil: both commands are off and no run is offered the checklist.
	Plan Plan
	// Asks are the questions running tools wait on: a press or a typed
	// option answers them; New makes the router their Poster. Nil: none.
	Asks *choice.Asks
}

// Plan is a conversation's goal and plan mode as the router sees them
// (plan.Book).
type Plan interface {
	On(chatKey string) bool
	PlanCommand(chatKey, args string) string
	GoalCommand(chatKey, args string) string
	StatusText(chatKey, threadID string) string
}

// Research is /research as the router sees it. A research is a
// conversation: while it waits for the person (a question, the plan),
// their next message goes to it.
type Research interface {
	// Pending reports whether the thread's research waits for the
	// person's reply.
	Pending(threadID string) bool
	// Resumable reports whether the thread has a research that stopped
	// before its report and is not running.
	Resumable(threadID string) bool
	// Run handles one message as the thread's run, reporting like
	// agent.Run. mode is "start", "auto", "reply" or "resume".
	Run(ctx context.Context, mode string, in agent.Input) iter.Seq[event.Event]
	// Status describes the thread's research for /status ("" if none).
	Status(threadID string) string
	// Cancel drops a research that waits for the person or was
	// interrupted, reporting whether there was one.
	Cancel(threadID string) bool
}

// Skills is what the router needs of the skills.
type Skills interface {
	// Has reports whether name is an enabled skill.
	Has(name string) bool
	// Command answers "/skills args" from userID ("channel:user").
	Command(userID, args string) string
}

// Memory is long-term memory as the /memory command sees it.
type Memory interface {
	// Command answers "/memory args" from userID ("channel:user") in
	// chatKey; group says others can read the reply.
	Command(userID, chatKey string, group bool, args string) string
}

// Router is the router between channels and the agent.
type Router struct {
	opts    Options
	log     *slog.Logger
	started time.Time
	out     *outbox.Outbox

	// ctx is the router's own: runs' deliveries send under it, and Close
	// ends it once the runner has closed.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	convs  map[string]*conv
	slots  map[string]*slot // chat runs between their engine and follower
	pruned time.Time        // when old event ids were last forgotten

	pressMu sync.Mutex // one button press at a time (see Press)

	stopLoops context.CancelFunc // ends Start's background work
	loops     sync.WaitGroup
}

// New returns a Router, registered with the runner as the front end of
// chat runs.
func New(opts Options) (*Router, error) {
	if opts.Store == nil || opts.Agent == nil || opts.Runner == nil {
		return nil, errors.New("router: store, agent and runner are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	out, err := outbox.New(outbox.Options{Store: opts.Store, Logger: opts.Logger, Now: opts.Now, Reopen: opts.Reopen})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Router{
		opts: opts, log: opts.Logger, started: opts.Now(), out: out,
		ctx: ctx, cancel: cancel,
		convs: make(map[string]*conv), slots: make(map[string]*slot),
	}
	opts.Runner.Handle(runner.OriginChat, runner.Handler{
		Engine:  runner.EngineFunc(r.execute),
		Observe: r.observe,
		Interrupted: func(tx *store.Tx, rec *store.Run, tasks []*store.Task) error {
			return r.RecordInterrupted(tx, []*store.Run{rec}, tasks)
		},
	})
	r.handleSchedules()
	if opts.Asks != nil {
		opts.Asks.SetPoster(r)
	}
	return r, nil
}

// Register adds the sender for its channel.
func (r *Router) Register(s bus.Sender) { r.out.Register(s) }

// ReplayOutbox sends again what was recorded in the outbox and never
// confirmed (see outbox.Outbox.Replay). It returns how many were
// delivered.
func (r *Router) ReplayOutbox(ctx context.Context) int { return r.out.Replay(ctx) }

// ErrClosed is returned by Publish after Close.
var ErrClosed = errors.New("router: closed")

// Publish hands a person's message to the router. Commands are answered at
// once; other text joins its conversation's queue and Publish returns
// without waiting for the answer. An error means the message was not
// accepted (the channel should not acknowledge it).
func (r *Router) Publish(ctx context.Context, in *bus.Inbound) error {
	in.Text = strings.TrimSpace(in.Text)
	if in.Text == "" && len(in.Files) == 0 {
		return nil
	}
	if in.Time.IsZero() {
		in.Time = r.opts.Now()
	}
	r.resolveReply(ctx, in)
	if r.seen(in) || (r.opts.Asks != nil && r.opts.Asks.Typed(ctx, in)) {
		return nil
	}
	if name, args, ok := parseCommand(in.Text); ok {
		skill := r.skill(name)
		if skill != "" && args != "" {
			in.Skill, in.Text = skill, args
			return r.enqueue(ctx, in)
		}
		if name == "research" && r.opts.Research != nil {
			if mode, topic := researchArgs(args); topic != "" {
				in.Research, in.Text = mode, topic
				return r.enqueue(ctx, in)
			}
		}
		if dup, err := r.record(in); err != nil || dup {
			return err
		}
		if skill != "" {
			return r.reply(ctx, in, fmt.Sprintf("Tell me what to do with the %s skill: /%s <your task>.", skill, name))
		}
		return r.command(ctx, in, name, args)
	}
	return r.enqueue(ctx, in)
}

// skill returns the skill a "/name" message activates, or "": an enabled
// skill called name (or, for Telegram's command style, with _ for -),
// unless a command has that name.
func (r *Router) skill(name string) string {
	if r.opts.Skills == nil || isCommand(name) {
		return ""
	}
	for _, n := range []string{name, strings.ReplaceAll(name, "_", "-")} {
		if r.opts.Skills.Has(n) {
			return n
		}
	}
	return ""
}

// reply sends a plain message into in's conversation.
func (r *Router) reply(ctx context.Context, in *bus.Inbound, text string) error {
	_, err := r.out.Send(ctx, in.ChatKey(), &bus.Outbound{
		Kind: bus.OutMessage, Channel: in.Channel, ChatID: in.ChatID, Topic: in.Topic,
		ReplyTo: in.MessageID, Text: text, Final: true,
	})
	return err
}

// WaitIdle blocks until no conversation has queued or running work and
// every run's end has been shown, or ctx is done.
func (r *Router) WaitIdle(ctx context.Context) error {
	return r.opts.Runner.WaitIdle(ctx) // a run ends after its answer is shown
}

// Start delivers what a previous process left in the outbox, then keeps
// retrying unconfirmed sends (and forgetting old event ids) in the
// background until Close. Call it once the channels' senders are
// registered.
func (r *Router) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.stopLoops = cancel
	r.mu.Unlock()
	r.loops.Add(2)
	go func() {
		defer r.loops.Done()
		r.out.Run(ctx)
	}()
	go func() {
		defer r.loops.Done()
		r.pruneLoop(ctx)
	}()
}

// Close ends the router once the runner has closed (its runs have shown
// their ends): the deliveries' context ends, and the outbox's retries and
// the other background work stop. What is left unsent stays in the outbox
// for the next process.
func (r *Router) Close(ctx context.Context) {
	r.cancel()
	r.mu.Lock()
	stop := r.stopLoops
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
	r.loops.Wait()
}

// Depth returns how many messages wait behind running replies, across
// conversations, and how many replies are running.
func (r *Router) Depth() (queued, running int) { return r.opts.Runner.Depth() }
