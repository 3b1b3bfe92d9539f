package channels

import (
	"context"
	"sync"
)

// Lanes runs a receive loop's work per chat: one chat's in the order it
// was given, different chats' side by side, on goroutines of a Group. A
// loop that accepted one event at a time waited for each one's commit
// before reading the next; in lanes, events of different chats are stored
// together (they share commits) while each chat keeps its order.
// The zero Lanes is ready to use.
type Lanes struct {
	mu    sync.Mutex
	queue map[string][]func(context.Context) // per chat; present while a worker drains it
}

// Go queues f in key's lane, starting the lane's worker on g if it has
// none. It reports false, and runs nothing, once g has ended.
func (l *Lanes) Go(g *Group, key string, f func(ctx context.Context)) bool {
	l.mu.Lock()
	if l.queue == nil {
		l.queue = map[string][]func(context.Context){}
	}
	q, busy := l.queue[key]
	l.queue[key] = append(q, f)
	l.mu.Unlock()
	if busy {
		return true
	}
	if g.Go(func(ctx context.Context) { l.drain(ctx, key) }) {
		return true
	}
	l.mu.Lock()
	delete(l.queue, key)
	l.mu.Unlock()
	return false
}

// drain runs key's queued work until none is left.
func (l *Lanes) drain(ctx context.Context, key string) {
	for {
		l.mu.Lock()
		q := l.queue[key]
		if len(q) == 0 {
			delete(l.queue, key)
			l.mu.Unlock()
			return
		}
		f := q[0]
		l.queue[key] = q[1:]
		l.mu.Unlock()
		f(ctx)
	}
}
