package runner

import (
	"context"
	"sync"

	"github.com/deerflow/deerflow/event"
)

// Record is one journaled event of a run. Seq starts at 1 and grows by one
// per event; a follower that reconnects asks for the records after the
// last Seq it saw.
type Record struct {
	Seq   int
	Event event.Event
}

// Journal keeps one run's events for the front ends that follow it: Add
// appends (sequence numbers from 1), Close ends it, Read returns the
// records after a sequence number, whether it has ended, and a channel
// closed when there is more. A journal on another engine (see doc.go)
// implements these three methods.
type Journal interface {
	Add(ev event.Event)
	Close()
	Read(after int) (recs []Record, ended bool, more <-chan struct{})
}

// journal keeps a run's latest events for its followers, in memory: the
// run's durable state (its messages, its record) is in the store, and the
// journal is what a front end replays to show it live. It keeps the last
// max records.
type journal struct {
	max    int
	mu     sync.Mutex
	recs   []Record
	next   int           // Seq of the next record
	wake   chan struct{} // made by a reader that waits; closed (and cleared) when a record is added or the journal ends
	closed bool
}

func newJournal(max int) *journal {
	return &journal{max: max, next: 1}
}

// Add appends ev, dropping the oldest record beyond max, and wakes the
// followers.
func (j *journal) Add(ev event.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return
	}
	j.recs = append(j.recs, Record{Seq: j.next, Event: ev})
	j.next++
	if len(j.recs) >= 2*j.max { // trim in one copy per max records, not one per event
		j.recs = append(j.recs[:0:0], j.recs[len(j.recs)-j.max:]...)
	}
	j.wakeLocked()
}

// wakeLocked wakes the readers waiting, if any.
func (j *journal) wakeLocked() {
	if j.wake != nil {
		close(j.wake)
		j.wake = nil
	}
}

// Close ends the journal: followers stop once they have read everything.
func (j *journal) Close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		j.closed = true
		j.wakeLocked()
	}
}

// Read returns the records after seq, whether the journal has ended, and
// a channel closed when there is more.
func (j *journal) Read(after int) ([]Record, bool, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Record
	kept := j.recs[max(len(j.recs)-j.max, 0):] // the last max records
	if n := len(kept); n > 0 {
		i := max(after-kept[0].Seq+1, 0)
		if i < n {
			out = append(out, kept[i:]...)
		}
	}
	if j.wake == nil && !j.closed {
		j.wake = make(chan struct{})
	}
	return out, j.closed, j.wake
}

// follow reads j from after seq until it ends or ctx is done.
func follow(j Journal, ctx context.Context, after int) func(func(Record) bool) {
	return func(yield func(Record) bool) {
		for {
			recs, closed, wake := j.Read(after)
			for _, rec := range recs {
				if !yield(rec) {
					return
				}
				after = rec.Seq
			}
			if closed && len(recs) == 0 {
				return
			}
			if len(recs) > 0 {
				continue // more may have come meanwhile
			}
			select {
			case <-wake:
			case <-ctx.Done():
				return
			}
		}
	}
}
