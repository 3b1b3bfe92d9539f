// Package agent is the lead agent: the run loop (model → tool calls →
// results → model), thread state persisted after every step, the middleware
// chain, the system prompt, events, and the run manager that allows one
// active run per thread.
//
// It never imports bus or channels: it emits events and the router turns
// them into chat messages.
package agent

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent/history"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// ModelRef is one configured model the agent may use.
type ModelRef struct {
	Name        string // what users pick with /models NAME
	ID          string // the provider's model id
	Description string
	Model       llm.Model
	MaxTokens   int
	Temperature *float32
	// ContextWindow is the model's context size in tokens (0: unknown);
	// summarization starts well before it.
	ContextWindow int
	// Vision: the model takes images (view_image is offered).
	Vision bool
	// Price is what the model's tokens cost; the zero Price is unknown.
	Price Price
}

// Options configures an Agent. Zero fields take the documented defaults.
type Options struct {
	Store  *store.Store    // required
	Models []ModelRef      // required; the first is the default
	Tools  *tools.Registry // nil: no tools
	// Middlewares wrap model and tool calls, outermost first. Nil means
	// DefaultChain().
	Middlewares []Middleware
	Prompt      *Prompt       // nil: DefaultPrompt("DeerFlow")
	MaxTurns    int           // model calls per run; 0 → 100
	ToolTimeout time.Duration // per tool call; 0 → 10 minutes
	// ToolContext, when set, prepares the context of a run's tool calls
	// (for example to attach the thread's sandbox). It is called once per
	// run, before the first tool call.
	ToolContext func(ctx context.Context, in *Input) (context.Context, error)
	// HistoryCache is how many recently active threads keep their history
	// in memory; 0 → 256, negative → none.
	HistoryCache int
	// TurnContext, when set, returns text given to the model with the
	// user's message of each run (memory, for example), in the model's
	// view only: the stored message stays as sent, so the system prompt
	// and the history before it stay a stable, cacheable prefix.
	TurnContext func(ctx context.Context, in *Input) string
	// AllowedTools, when set and returning a non-empty list, restricts a
	// run to those tools: only they are offered, and calls of others are
	// refused (an activated skill's allowed-tools).
	AllowedTools func(in *Input) []string
	// Deferred tools are neither offered nor callable until a call loads them (tools.Env.Load).
	Deferred func(tool string) bool
	// OnAnswer, when set, runs inside the transaction that stores a run's
	// answer (a memory updater queues the exchange there, so it is never
	// lost). It may run more than once for one answer and must be
	// idempotent.
	OnAnswer func(tx *store.Tx, in *Input, answer string) error
	// Summarize, when set, folds older messages into a summary before a
	// request would grow past its threshold.
	Summarize *Summarize
	// TitleModel, when set, names each thread after its first exchange;
	// nil titles it with the start of the first message.
	TitleModel *ModelRef
	// DailyTokenBudget caps the tokens one conversation (chat key) may use
	// per UTC day; 0 means no cap.
	DailyTokenBudget int64
	// Ephemeral agents store nothing: every run starts from an empty
	// thread and keeps its history in memory only (subagents, whose
	// records are kept by their executor).
	Ephemeral bool
	Logger    *slog.Logger // nil: slog.Default()
	Now       func() time.Time
	// Metrics, when set, records each run's outcome and duration (an
	// Ephemeral agent's as a subagent's), each model call and tool errors.
	Metrics *metrics.Metrics
}

// Agent runs conversations. It is safe for concurrent use; runs of
// different threads proceed in parallel, runs of one thread never overlap.
type Agent struct {
	opts   Options
	chain  chain
	prompt *Prompt
	log    *slog.Logger

	history *history.Cache

	mu     sync.Mutex
	active map[string]*activeRun // thread id → its running run

	bg sync.WaitGroup // background work of finished runs (titles)
	// bgCtx is what background work runs under; StopAll cancels it with
	// its cause (background work outlives the run that started it, so
	// the run's context cannot govern it).
	bgCtx  context.Context
	bgStop context.CancelCauseFunc
	// stopping is set by StopAll (under mu): no background work starts
	// after it, so its wait on bg never races a new Add.
	stopping bool
}

// ErrThreadBusy is returned when a thread already has an active run.
var ErrThreadBusy = errors.New("agent: thread already has an active run")

// ErrStopped is the cancellation cause of a run stopped by a user.
var ErrStopped = errors.New("agent: run stopped")

// New returns an Agent.
func New(opts Options) (*Agent, error) {
	if opts.Store == nil {
		return nil, errors.New("agent: no store")
	}
	if len(opts.Models) == 0 {
		return nil, errors.New("agent: no model configured")
	}
	if opts.Tools == nil {
		opts.Tools = tools.NewRegistry()
	}
	if opts.Middlewares == nil {
		opts.Middlewares = DefaultChain()
	}
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = 100
	}
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := opts.Prompt
	if p == nil {
		p = DefaultPrompt("DeerFlow")
	}
	if opts.Ephemeral {
		opts.HistoryCache = -1
	}
	if opts.HistoryCache == 0 {
		opts.HistoryCache = 256
	}
	bgCtx, bgStop := context.WithCancelCause(context.Background())
	return &Agent{
		bgCtx:   bgCtx,
		bgStop:  bgStop,
		opts:    opts,
		chain:   compose(opts.Middlewares),
		prompt:  p,
		log:     opts.Logger,
		history: history.New(opts.HistoryCache),
		active:  make(map[string]*activeRun),
	}, nil
}

// Models returns the configured models, the default first.
func (a *Agent) Models() []ModelRef { return a.opts.Models }

// DailyTokenBudget is the per-conversation daily cap; 0 means none.
func (a *Agent) DailyTokenBudget() int64 { return a.opts.DailyTokenBudget }

// Tools returns the lead agent's tool registry.
func (a *Agent) Tools() *tools.Registry { return a.opts.Tools }

// Model returns the model called name, or the default when name is empty or
// unknown; ok reports whether name itself was found.
func (a *Agent) Model(name string) (ref ModelRef, ok bool) {
	for _, m := range a.opts.Models {
		if m.Name == name {
			return m, true
		}
	}
	return a.opts.Models[0], name == ""
}

// Input is one user turn.
type Input struct {
	ThreadID string
	ChatKey  string // channel:chat[:topic]
	UserID   string // channel:user
	Text     string
	// Model is the model name to use; empty means the thread's choice,
	// else the persona's model, else the default.
	Model string
	// Persona is the named agent the run answers as; nil is the built-in
	// lead agent.
	Persona *Persona
	// RunID is assigned when empty.
	RunID string
	// Skill names the skill the person activated for this message
	// ("/<skill> task"); see Options.TurnContext and AllowedTools.
	Skill string
	// Workspace is the thread whose workspace tool calls act on; empty
	// means ThreadID. A subagent works in its lead's workspace.
	Workspace string
	// OnBegin, when set, runs inside the transaction that stores the
	// user's message in the thread (for example to delete the message's
	// copy in an intake queue, so it is handled exactly once).
	OnBegin func(*store.Tx) error
	// OnAnswer, when set, runs inside the transaction that stores this
	// run's answer (after Options.OnAnswer), for example to record its
	// delivery in an outbox. It may run more than once for one answer.
	OnAnswer func(tx *store.Tx, answer string) error
	// MessageID is the platform id of the message the run answers; it is
	// kept with the run record (to reply to it after a restart).
	MessageID string
}
