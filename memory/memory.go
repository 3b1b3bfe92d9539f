// Package memory is long-term memory, kept per person (or per chat): a few
// summaries and up to a hundred facts in the store. After each answered
// message the exchange is queued in the same transaction as the answer; a
// debounced updater asks the model, with a JSON-output prompt, what to add,
// replace or drop. Each run's model view starts with a <memory> block for
// the person who wrote the message, and only that person. /memory shows,
// forgets, clears and switches it off.
package memory

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
)

// Options configures a Manager. Zero numbers take the documented defaults.
type Options struct {
	Store   *store.Store // required
	Model   llm.Model    // required: the model that updates memory
	ModelID string       // the provider's model id
	// Scope is "user" (one memory per person, across chats) or "chat"
	// (one per chat, shared by its members).
	Scope         string
	Debounce      time.Duration // quiet time before an update; 0 → 30 s
	MaxFacts      int           // 0 → 100
	MinConfidence float64       // facts below are dropped; 0 → 0.7
	MaxTokens     int           // of the injected block; 0 → 2000
	Timeout       time.Duration // of one update's model call; 0 → 2 minutes
	Logger        *slog.Logger
	Now           func() time.Time
}

// Manager keeps memory: injection, the updater and the /memory command.
// It is safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	blocks  map[string]block // scope → rendered <memory> block
	sched   map[string]*schedule
	clears  map[string]time.Time // scope → when /memory clear asked for confirmation
	closed  bool
	running sync.WaitGroup // scheduled updates under way
	// ctx is what scheduled updates run under: Flush cancels it when its
	// own ctx ends, cutting updates under way short, and once it is done.
	ctx    context.Context
	cancel context.CancelFunc
}

type block struct {
	text string
	off  bool
}

// schedule is a scope's pending update.
type schedule struct {
	timer   *time.Timer
	first   time.Time // when the oldest unhandled exchange was scheduled
	running bool
	again   bool // scheduled while running: run once more after
}

// New returns a Manager. Call Start to pick up exchanges a previous process
// left, and Flush at shutdown.
func New(opts Options) (*Manager, error) {
	if opts.Store == nil || opts.Model == nil {
		return nil, errors.New("memory: store and model are required")
	}
	if opts.Scope == "" {
		opts.Scope = "user"
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 30 * time.Second
	}
	if opts.MaxFacts <= 0 {
		opts.MaxFacts = 100
	}
	if opts.MinConfidence <= 0 {
		opts.MinConfidence = 0.7
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 2000
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		ctx:    ctx,
		cancel: cancel,
		opts:   opts,
		log:    opts.Logger,
		blocks: map[string]block{},
		sched:  map[string]*schedule{},
		clears: map[string]time.Time{},
	}, nil
}

// ScopeOf is the memory a message belongs to: its sender's ("telegram:1001")
// or, with scope chat, its chat's ("chat:telegram:-100200").
func (m *Manager) ScopeOf(userID, chatKey string) string {
	if m.opts.Scope != "chat" {
		return userID
	}
	channel, rest, _ := strings.Cut(chatKey, ":")
	chat, _, _ := strings.Cut(rest, ":")
	return "chat:" + channel + ":" + chat
}

// Block returns the <memory> block for a run of userID in chatKey: empty
// when nothing is remembered or memory is off for them.
func (m *Manager) Block(userID, chatKey string) string {
	scope := m.ScopeOf(userID, chatKey)
	if scope == "" || scope == ":" {
		return ""
	}
	m.mu.Lock()
	b, ok := m.blocks[scope]
	m.mu.Unlock()
	if ok {
		return b.text
	}
	var mem *store.Memory
	err := m.opts.Store.View(func(tx *store.Tx) error {
		var err error
		mem, err = tx.Memory(scope)
		return err
	})
	if err != nil {
		m.log.Error("reading memory", "scope", scope, "err", err)
		return ""
	}
	b = block{off: mem.Off}
	if !mem.Off {
		b.text = render(mem, m.opts.MaxTokens)
	}
	m.mu.Lock()
	if len(m.blocks) >= maxCachedBlocks {
		clear(m.blocks)
	}
	m.blocks[scope] = b
	m.mu.Unlock()
	return b.text
}

// maxCachedBlocks bounds the rendered-block cache.
const maxCachedBlocks = 4096

// forget drops scope's cached block after its memory changed.
func (m *Manager) forget(scope string) {
	m.mu.Lock()
	delete(m.blocks, scope)
	m.mu.Unlock()
}

// Record queues a finished exchange for the updater. It runs inside the
// transaction that stores the answer, so the exchange is kept exactly when
// the answer is; the update is scheduled once that commits.
func (m *Manager) Record(tx *store.Tx, userID, chatKey, threadID, runID, user, answer string) error {
	scope := m.ScopeOf(userID, chatKey)
	m.mu.Lock()
	b, known := m.blocks[scope]
	m.mu.Unlock()
	if known && b.off {
		return nil
	}
	user = stripUploads(user)
	if strings.TrimSpace(user) == "" || runID == "" {
		return nil
	}
	if err := tx.AddExchange(scope, &store.Exchange{RunID: runID, ThreadID: threadID, User: user, Answer: answer, Time: m.opts.Now()}); err != nil {
		return err
	}
	tx.OnCommit(func() { m.schedule(scope) })
	return nil
}

// stripUploads removes the note about uploaded files from a message: the
// upload itself is not something to remember.
func stripUploads(s string) string {
	for {
		i := strings.Index(s, "<uploaded_files>")
		if i < 0 {
			return strings.TrimSpace(s)
		}
		j := strings.Index(s[i:], "</uploaded_files>")
		if j < 0 {
			return strings.TrimSpace(s[:i])
		}
		s = s[:i] + s[i+j+len("</uploaded_files>"):]
	}
}

// Start schedules the updates of exchanges a previous process queued.
func (m *Manager) Start() error {
	var scopes []string
	err := m.opts.Store.View(func(tx *store.Tx) error {
		var err error
		scopes, err = tx.PendingScopes()
		return err
	})
	for _, s := range scopes {
		m.schedule(s)
	}
	return err
}

// schedule (re)starts the scope's debounce: the update runs once the
// scope has been quiet for Debounce, or at the latest four debounces after
// its oldest waiting exchange.
func (m *Manager) schedule(scope string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	s := m.sched[scope]
	if s == nil {
		s = &schedule{}
		m.sched[scope] = s
	}
	if s.running {
		s.again = true
		return
	}
	now := m.opts.Now()
	if s.timer == nil {
		s.first = now
		s.timer = time.AfterFunc(m.opts.Debounce, func() { m.fire(scope) })
		return
	}
	wait := m.opts.Debounce
	if latest := s.first.Add(4 * m.opts.Debounce).Sub(now); latest < wait {
		wait = max(latest, 0)
	}
	s.timer.Reset(wait)
}

// fire runs a scope's scheduled update, and again if more came meanwhile.
func (m *Manager) fire(scope string) {
	m.mu.Lock()
	s := m.sched[scope]
	if m.closed || s == nil || s.running {
		m.mu.Unlock()
		return
	}
	s.running, s.timer = true, nil
	m.running.Add(1)
	m.mu.Unlock()
	defer m.running.Done()

	ctx, cancel := context.WithTimeout(m.ctx, m.opts.Timeout)
	retry := m.update(ctx, scope) != nil
	cancel()

	m.mu.Lock()
	s.running = false
	again := s.again || retry
	s.again = false
	if !again {
		delete(m.sched, scope)
	}
	m.mu.Unlock()
	if again {
		m.schedule(scope)
	}
}

// Flush runs every waiting update now and waits for them, or for ctx to
// end (updates under way are then cut short). Later exchanges are no
// longer scheduled: call it at shutdown, once no run can finish any more.
func (m *Manager) Flush(ctx context.Context) {
	defer m.cancel()
	stop := context.AfterFunc(ctx, m.cancel)
	defer stop()
	m.mu.Lock()
	m.closed = true
	for _, s := range m.sched {
		if s.timer != nil {
			s.timer.Stop()
		}
	}
	m.mu.Unlock()
	m.running.Wait() // updates under way finish first (they hold their scope)

	var scopes []string
	m.opts.Store.View(func(tx *store.Tx) error {
		var err error
		scopes, err = tx.PendingScopes()
		return err
	})
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, scope := range scopes {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			m.log.Warn("memory updates left for the next start", "scopes", len(scopes))
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m.update(ctx, scope)
		}()
	}
	wg.Wait()
}

// Busy reports whether an update is running or scheduled.
func (m *Manager) Busy() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sched) > 0
}
