// Package runner is the one place a run's life is decided, whatever
// started it (a chat message, an HTTP API call, a research, a schedule).
// A front end submits a Request; the runner stores it in a durable
// per-conversation FIFO, starts it when the conversation is free (one run
// at a time, in order), applies the multitask strategy when it is not,
// journals the run's typed events for the front ends that follow it,
// cancels it on request, and after a crash resumes what was queued and
// reports what was cut short, in one pass.
//
// It imports agent (for its Input and stop cause), event and store; front
// ends import it, never the other way round.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// Origins: who started a run.
const (
	OriginChat     = "chat"
	OriginAPI      = "api"
	OriginSchedule = "schedule"
)

// ScheduledRunPrefix begins the id of every scheduled run: a run record
// found running after a crash does not keep its origin, and a scheduled
// run's conversation is a chat's.
const ScheduledRunPrefix = "sched_"

// Strategy says what a new run does when its conversation is busy.
type Strategy string

// The multitask strategies.
const (
	Enqueue   Strategy = "enqueue"   // wait its turn (the default)
	Reject    Strategy = "reject"    // refuse it (ErrBusy)
	Interrupt Strategy = "interrupt" // stop the active run, keeping what it produced, then run
	Rollback  Strategy = "rollback"  // stop the active run, undo it, then run
)

// ParseStrategy reads a strategy name; "" is Enqueue.
func ParseStrategy(s string) (Strategy, bool) {
	switch st := Strategy(s); st {
	case "":
		return Enqueue, true
	case Enqueue, Reject, Interrupt, Rollback:
		return st, true
	}
	return "", false
}

// Run statuses, as front ends show them.
const (
	StatusPending     = "pending"
	StatusRunning     = "running"
	StatusSuccess     = "success"
	StatusError       = "error"
	StatusInterrupted = "interrupted"
)

// Request is one run to start. It is stored as JSON while it waits, so
// after a restart it runs with the same id.
type Request struct {
	ID       string `json:"id"`                 // assigned when empty
	Conv     string `json:"conv,omitempty"`     // the conversation: one run at a time; "" → "api:"+ThreadID
	ThreadID string `json:"thread_id"`          // the agent thread it runs on
	Origin   string `json:"origin,omitempty"`   // who started it; "" → OriginAPI (stored before origins existed)
	ChatKey  string `json:"chat_key,omitempty"` // channel:chat[:topic]; "" → Conv
	User     string `json:"user"`               // channel:user
	Text     string `json:"input"`
	Model    string `json:"model,omitempty"`
	Skill    string `json:"skill,omitempty"`
	// MessageID is the platform id of the message the run answers.
	MessageID string `json:"message_id,omitempty"`
	// Data is the front end's own, kept with the run (a chat message's
	// platform details, a research mode).
	Data    json.RawMessage `json:"data,omitempty"`
	Created time.Time       `json:"created"`

	// Strategy applies when the conversation is busy; it is not stored
	// (a run resumed after a restart simply waits its turn).
	Strategy Strategy `json:"-"`
	// Also, when set, runs inside the transaction that stores the
	// request; an error from it stores nothing and is Submit's error.
	Also func(*store.Tx) error `json:"-"`
	// BeginsAtOnce says the engine calls Run.Begin as the first thing it
	// does (nothing slow, such as fetching files, comes before). When the
	// conversation is idle, such a run is then not stored on its own: it
	// starts at once, and its request (with Also) is stored by its begin
	// commit, which Submit waits for. One commit, instead of one to queue
	// it and another to take it off the queue, on the way to the answer.
	BeginsAtOnce bool `json:"-"`
}

func (q *Request) normalize() {
	if q.Origin == "" {
		q.Origin = OriginAPI
	}
	if q.Conv == "" {
		q.Conv = "api:" + q.ThreadID
	}
	if q.ChatKey == "" {
		q.ChatKey = q.Conv
	}
}

// Engine runs one run and reports it with typed events, the last being
// event.Answer, event.Error or event.Stopped. It calls Run.Begin inside
// the commit that records the run's start (agent.Input.OnBegin does).
type Engine interface {
	Run(ctx context.Context, run *Run) iter.Seq[event.Event]
}

// EngineFunc adapts a function to Engine.
type EngineFunc func(ctx context.Context, run *Run) iter.Seq[event.Event]

// Run implements Engine.
func (f EngineFunc) Run(ctx context.Context, run *Run) iter.Seq[event.Event] { return f(ctx, run) }

// Handler is what the runner needs of a front end, per origin.
type Handler struct {
	// Engine runs the origin's runs. Required.
	Engine Engine
	// Observe, when set, is given every event of the origin's runs as it
	// is journaled, in order, from Began to Ended, on the goroutine that
	// produced it (the run's, or a Cancel's for a run that never began).
	// The run waits for it: a front end that renders in its own chat
	// keeps its answers in order and needs no goroutine of its own.
	// Others follow the journal (Run.Events, Run.Read).
	Observe func(run *Run, ev event.Event)
	// Interrupted, when set, records inside tx what the origin's people
	// are to be told about a run a crash cut short (tasks: its subagent
	// tasks that stopped with it).
	Interrupted func(tx *store.Tx, rec *store.Run, tasks []*store.Task) error
	// Undoable: the origin's runs can be rolled back by a later run
	// (strategy Rollback), so the thread is saved before each starts.
	Undoable bool
	// Resumable, when set, says whether a run stored before a restart
	// is still wanted (its thread may be gone); false drops it.
	Resumable func(req *Request) bool
	// Keep is how long a finished run stays for Lookup and Events; 0:
	// it is forgotten once it ends (its followers still get every event).
	Keep time.Duration
}

// Options configures a Runner.
type Options struct {
	Store *store.Store // required
	// Stop, when set, is called by Close after the runs were cancelled,
	// to wait for work the runs left behind (agent.StopAll).
	Stop func(ctx context.Context, cause error)
	// Forget, when set, is told a thread was rolled back in the store
	// (agent.ForgetHistory drops its cached history).
	Forget func(threadID string)
	// MaxQueued is how many runs may wait per conversation (0 → 20);
	// MaxQueuedTotal across all (0 → 10,000).
	MaxQueued      int
	MaxQueuedTotal int
	// Buffer is how many events of a run are kept for followers that
	// join late (0 → 512).
	Buffer int
	// Queue keeps the waiting runs; nil: BoltQueue(Store).
	Queue Queue
	// Journal makes a run's journal; nil: in memory, keeping Buffer
	// events.
	Journal func(runID string) Journal
	Logger  *slog.Logger
	Now     func() time.Time
}

// Errors of Submit.
var (
	// ErrClosed: the runner is shutting down.
	ErrClosed = errors.New("runner: shutting down")
	// ErrBusy: strategy Reject and the conversation has a run active or
	// waiting.
	ErrBusy = errors.New("runner: conversation busy")
)

// FullError is Submit's error when the queue is at its cap.
type FullError struct {
	Waiting int  // runs waiting in the conversation
	Global  bool // the cap across all conversations was reached
}

func (e *FullError) Error() string {
	if e.Global {
		return "runner: too many runs waiting"
	}
	return fmt.Sprintf("runner: %d runs already wait in this conversation", e.Waiting)
}

// RetryAfter is a fair pause before trying again.
func (e *FullError) RetryAfter() time.Duration {
	if e.Global {
		return 30 * time.Second
	}
	return 10 * time.Second
}

// Runner runs every run of the process.
type Runner struct {
	opts Options
	log  *slog.Logger
	q    Queue

	base     context.Context // every run's context descends from it
	stopBase context.CancelCauseFunc

	mu       sync.Mutex
	handlers map[string]Handler
	convs    map[string]*lane
	runs     map[string]*Run // active, waiting and kept
	waiting  int
	started  bool // Start was called: runs may start
	closed   bool
	workers  sync.WaitGroup
	idle     *sync.Cond // signalled when a lane's worker exits
	nworkers int
}

// New returns a Runner. Register every origin's Handler, then Recover
// (before anything is submitted), then Start once the front ends can show
// what runs; runs submitted before Start wait for it.
func New(opts Options) (*Runner, error) {
	if opts.Store == nil {
		return nil, errors.New("runner: a store is required")
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = 20
	}
	if opts.MaxQueuedTotal <= 0 {
		opts.MaxQueuedTotal = 10_000
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 512
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Queue == nil {
		opts.Queue = BoltQueue(opts.Store)
	}
	if opts.Journal == nil {
		buffer := opts.Buffer
		opts.Journal = func(string) Journal { return newJournal(buffer) }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	base, stop := context.WithCancelCause(context.Background())
	r := &Runner{
		opts: opts, log: opts.Logger, q: opts.Queue,
		base: base, stopBase: stop,
		handlers: map[string]Handler{}, convs: map[string]*lane{}, runs: map[string]*Run{},
	}
	r.idle = sync.NewCond(&r.mu)
	return r, nil
}

// Handle registers the front end of origin.
func (r *Runner) Handle(origin string, h Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[origin] = h
}

func (r *Runner) handler(origin string) (Handler, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.handlers[origin]
	return h, ok && h.Engine != nil
}

// Ticket is what Submit gives back.
type Ticket struct {
	Run *Run
	// Ahead is how many runs the person waits for before this one starts
	// (0 when it starts now, or right after an answer already shown).
	Ahead int
}

// Submit stores req and queues it on its conversation as its strategy
// says. It returns once the run is durable. Errors: ErrClosed, ErrBusy,
// *FullError, or the store's (or req.Also's).
func (r *Runner) Submit(req Request) (Ticket, error) {
	req.normalize()
	if req.ID == "" {
		req.ID = agent.NewID("run_")
	}
	if req.Created.IsZero() {
		req.Created = r.opts.Now()
	}
	h, ok := r.handler(req.Origin)
	if !ok {
		return Ticket{}, fmt.Errorf("runner: no handler for origin %q", req.Origin)
	}
	l, err := r.admit(&req)
	if err != nil {
		return Ticket{}, err
	}
	run := r.newRun(req, h)
	if r.atOnce(l, &req) {
		return r.submitAtOnce(l, run)
	}
	seq, err := r.q.Push(&req) // no lock held: the lane counts it as pending
	if err != nil {
		r.unreserve(l)
		return Ticket{}, err
	}
	run.seq = seq
	ahead, err := r.enqueue(l, run, req.Strategy, true)
	if errors.Is(err, ErrClosed) {
		// Shutdown began while it was stored: it is accepted all the
		// same (its event may already be marked seen) and runs after the
		// restart, like the other waiting runs.
		run.finish(StatusPending, "deerflow is shutting down; the run starts once it is back")
		return Ticket{Run: run}, nil
	}
	r.start(l)
	return Ticket{Run: run, Ahead: ahead}, nil
}

// admit checks the caps and the strategy and reserves a place in the
// conversation's lane for req while it is stored: a "reject" submitted
// meanwhile sees the conversation busy, as the store will have it.
func (r *Runner) admit(req *Request) (*lane, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	l := r.laneLocked(req.Conv)
	waiting := len(l.queue) + l.pending
	switch {
	case l.closing:
		return nil, ErrBusy
	case req.Strategy == Reject && (l.active != nil || waiting > 0):
		return nil, ErrBusy
	case waiting >= r.opts.MaxQueued:
		return nil, &FullError{Waiting: waiting}
	case r.waiting >= r.opts.MaxQueuedTotal:
		return nil, &FullError{Waiting: waiting, Global: true}
	}
	l.pending++
	r.waiting++
	return l, nil
}

// unreserve gives back a place admit reserved for a run not stored.
func (r *Runner) unreserve(l *lane) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l.pending--
	r.waiting--
	r.idle.Broadcast()
}
