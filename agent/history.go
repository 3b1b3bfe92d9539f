package agent

import (
	"container/list"
	"sync"

	"github.com/deerflow/deerflow/store"
)

// historyCache keeps the message history of recently active threads, so a
// turn does not re-read and decode a whole thread from the store. It is
// only correct because every write of a thread's messages goes through its
// (single) active run; anything else that changes a thread's messages must
// call Agent.Forget.
type historyCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used; values are *historyEntry
	byID  map[string]*list.Element
}

type historyEntry struct {
	thread string
	msgs   []*store.Message
}

func newHistoryCache(max int) *historyCache {
	return &historyCache{max: max, order: list.New(), byID: make(map[string]*list.Element)}
}

// get returns a copy of the thread's cached history (a run appends to it).
func (c *historyCache) get(thread string) ([]*store.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[thread]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	msgs := el.Value.(*historyEntry).msgs
	return append(make([]*store.Message, 0, len(msgs)+8), msgs...), true
}

func (c *historyCache) put(thread string, msgs []*store.Message) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[thread]; ok {
		el.Value.(*historyEntry).msgs = msgs
		c.order.MoveToFront(el)
		return
	}
	c.byID[thread] = c.order.PushFront(&historyEntry{thread: thread, msgs: msgs})
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*historyEntry)
		delete(c.byID, old.thread)
	}
}

func (c *historyCache) forget(thread string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[thread]; ok {
		c.order.Remove(el)
		delete(c.byID, thread)
	}
}

// Forget drops what the agent remembers of a thread's messages. Call it
// after changing a thread's messages outside a run.
func (a *Agent) Forget(threadID string) { a.history.forget(threadID) }
