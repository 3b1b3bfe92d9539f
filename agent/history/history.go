// Package history keeps the message history of recently active threads
// in memory for the agent. It must not import agent.
package history

import (
	"container/list"
	"sync"

	"github.com/deerflow/deerflow/store"
)

// Cache keeps the message history of recently active threads, so a turn
// does not re-read and decode a whole thread from the store. It is only
// correct because every write of a thread's messages goes through its
// (single) active run; anything else that changes a thread's messages must
// call the agent's Forget.
type Cache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used; values are *entry
	byID  map[string]*list.Element
}

type entry struct {
	thread string
	msgs   []*store.Message
}

// New returns a Cache of the histories of up to max threads, the most
// recently used; max <= 0 keeps none.
func New(max int) *Cache {
	return &Cache{max: max, order: list.New(), byID: make(map[string]*list.Element)}
}

// Get returns a copy of the thread's cached history (a run appends to it).
func (c *Cache) Get(thread string) ([]*store.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[thread]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	msgs := el.Value.(*entry).msgs
	return append(make([]*store.Message, 0, len(msgs)+8), msgs...), true
}

// Put keeps msgs as the thread's history.
func (c *Cache) Put(thread string, msgs []*store.Message) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[thread]; ok {
		el.Value.(*entry).msgs = msgs
		c.order.MoveToFront(el)
		return
	}
	c.byID[thread] = c.order.PushFront(&entry{thread: thread, msgs: msgs})
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*entry)
		delete(c.byID, old.thread)
	}
}

// Forget drops the thread's history.
func (c *Cache) Forget(thread string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[thread]; ok {
		c.order.Remove(el)
		delete(c.byID, thread)
	}
}
