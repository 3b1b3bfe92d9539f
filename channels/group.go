package channels

import (
	"context"
	"errors"
	"sync"
)

// ErrStopped is what an attachment's Open returns once its channel has
// stopped.
var ErrStopped = errors.New("the channel has stopped")

// Group owns the goroutines a channel starts beside its receive loop
// (reactions, acks, downloads, registrations) and the context they run
// under. Start calls Begin with its ctx and defers End, which cancels that
// context and waits for every goroutine Go started: Start returns only
// after they have ended. The zero Group is ready to use.
//
// Before Begin (the router may reopen a stored attachment before the
// channel starts), Context is one of the Group's own, cancelled as soon
// as the context Begin derives ends.
type Group struct {
	mu     sync.Mutex
	ctx    context.Context // Begin's, or the pending one before it
	cancel context.CancelFunc
	begun  bool
	ended  bool // after End: Go runs nothing until the next Begin
	wg     sync.WaitGroup
}

// Begin derives the channel's run context from ctx and returns it; End
// cancels it.
func (g *Group) Begin(ctx context.Context) context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	run, cancel := context.WithCancel(ctx)
	if g.cancel != nil && !g.begun {
		context.AfterFunc(run, g.cancel) // the pending context ends with this run
	}
	g.ctx, g.cancel, g.begun, g.ended = run, cancel, true, false
	return run
}

// Context is the channel's run context: what an attachment's Open, or any
// work the router asks of the channel outside a call of its own, runs
// under.
func (g *Group) Context() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.context()
}

// context returns g.ctx, making the pending one before Begin; g.mu is held.
func (g *Group) context() context.Context {
	if g.ctx == nil {
		// Not started yet: Begin ties this context to the run's.
		g.ctx, g.cancel = context.WithCancel(context.Background())
	}
	return g.ctx
}

// Go runs f in a goroutine with the run context. It reports false, and
// runs nothing, once End has been called.
func (g *Group) Go(f func(ctx context.Context)) bool {
	g.mu.Lock()
	if g.ended {
		g.mu.Unlock()
		return false
	}
	ctx := g.context()
	g.wg.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		f(ctx)
	}()
	return true
}

// End cancels the run context and waits for the goroutines Go started.
func (g *Group) End() {
	g.mu.Lock()
	g.ended = true
	g.context()
	g.cancel()
	g.mu.Unlock()
	g.wg.Wait()
}
