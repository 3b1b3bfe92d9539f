package progress

import (
	"context"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/outbox"
	"github.com/deerflow/deerflow/store"
)

// editor keeps one chat message showing the latest state of something that
// changes (an answer being written, a subagent at work): it sends the
// message as soon as there is something to show, then edits it at most
// once per interval. States in between are skipped, never queued, and the
// agent is never blocked by a slow platform.
//
// Its state lives in the delivery, under d.mu; render reads it.
type editor struct {
	d     *Delivery
	every time.Duration
	// render returns what the message should say now, and whether that is
	// its last version (the editor then sends it, rendered fully, and
	// ends). Called with d.mu held.
	render func() (text string, last bool)
	// out builds the bus.Outbound for the message.
	out func(kind bus.OutKind, text string) *bus.Outbound
	// sent, when set, is told the id of the message once it exists.
	sent func(id string)
	// after, when set, runs once the last version has been sent.
	after func()
	// onTx, when set, runs inside the transaction that maps the id of
	// the message once it exists.
	onTx func(tx *store.Tx, ids []string) error

	kick chan struct{} // never closed
	stop chan struct{} // closed to end the loop at once
	done chan struct{} // closed when the loop has ended

	msgID string // under d.mu
	dirty bool   // under d.mu
	// sending is set while the loop sends a version, and halted once
	// halt is called; both under d.mu. The loop sends nothing once
	// halted, so halt waits for the loop only when a send is under way.
	sending, halted bool
}

func (d *Delivery) newEditor(render func() (string, bool), out func(bus.OutKind, string) *bus.Outbound) *editor {
	e := &editor{
		d: d, every: d.every, render: render, out: out,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go e.loop()
	return e
}

// changed marks the state changed (the caller holds d.mu) and wakes the
// loop.
func (e *editor) changed() {
	e.dirty = true
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// ended reports whether the loop has ended.
func (e *editor) ended() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// halt ends the loop without sending anything more, and returns the id of
// the message, if one was sent.
//
// It returns at once unless a version is being sent (that send's id is
// the message's): the final answer does not wait for the loop to be
// scheduled only to see that it is stopped.
func (e *editor) halt() string {
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	e.d.mu.Lock()
	e.halted = true
	sending := e.sending
	e.d.mu.Unlock()
	if sending {
		<-e.done
	}
	e.d.mu.Lock()
	defer e.d.mu.Unlock()
	return e.msgID
}

// interval is the time to leave since the message's last change: the
// chat's edit interval for its last version, else that interval times the
// number of messages the run keeps editing in the chat, so that together
// they stay within the chat's budget (Telegram allows about one message a
// second per chat) and the answer is not stuck behind progress edits.
func (e *editor) interval() time.Duration {
	d := e.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, last := e.render(); last {
		return e.every
	}
	n := 0
	if d.main != nil {
		n++
	}
	for _, t := range d.tasks {
		if !t.final {
			n++
		}
	}
	if d.checklistLive() {
		n++
	}
	return e.every * time.Duration(max(n, 1))
}

// firstShowAfter is how long a message's first version waits.
const firstShowAfter = 700 * time.Millisecond

func (e *editor) loop() {
	defer close(e.done)
	d := e.d
	var last time.Time
	for {
		select {
		case <-e.kick:
		case <-e.stop:
			return
		}
		if !e.pause(last) {
			return
		}
		d.mu.Lock()
		if e.halted {
			d.mu.Unlock()
			return
		}
		text, final := e.render()
		id, dirty := e.msgID, e.dirty
		e.dirty = false
		e.sending = text != "" && dirty
		d.mu.Unlock()
		if text == "" {
			d.mu.Lock()
			e.dirty = e.dirty || dirty // nothing to show yet; keep it for later
			d.mu.Unlock()
			continue
		}
		if !dirty {
			continue
		}
		last = time.Now()
		if final {
			e.finish(d.ctx, id, text)
			if e.after != nil {
				e.after()
			}
			return // done, closed on return, ends halt's wait
		}
		e.show(d.ctx, id, text)
		d.mu.Lock()
		e.sending = false
		d.mu.Unlock()
	}
}

// pause waits until the message may change again, the last change having
// been at last (zero: never). A last version never waits: not for the
// first-show delay, not for the edit throttle (the channel's limiter still
// spaces it); a wait in progress ends as soon as the last version is
// there. It reports false when the loop is stopped meanwhile.
func (e *editor) pause(last time.Time) bool {
	wait := e.interval() - time.Since(last)
	if last.IsZero() {
		// The first version waits a moment: a reply that is done by
		// then is sent once, final and formatted, instead of as a
		// plain preview and then its edit (half the platform calls
		// for quick answers). "Typing…" shows meanwhile.
		wait = firstShowAfter
	}
	if wait <= 0 || e.lastVersion() {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return true
		case <-e.stop:
			return false
		case <-e.kick:
			if e.lastVersion() {
				return true
			}
		}
	}
}

// lastVersion reports whether what the message should say now is its last
// version.
func (e *editor) lastVersion() bool {
	e.d.mu.Lock()
	defer e.d.mu.Unlock()
	_, last := e.render()
	return last
}

// show sends a version that is not the last: the message, or an edit of
// it once it exists (id).
func (e *editor) show(ctx context.Context, id, text string) {
	d := e.d
	if id == "" {
		if ids, _, err := d.ob.Deliver(ctx, d.key, e.out(bus.OutMessage, text), outbox.SendOpts{OnTx: e.onTx}); err == nil && len(ids) > 0 {
			e.setID(ids[0])
		}
		return
	}
	o := e.out(bus.OutEdit, text)
	o.EditID = id
	d.ob.Send(ctx, d.key, o)
}

// finish sends the last version: an edit of the message, or a new message
// when there is none yet (or the edit fails).
func (e *editor) finish(ctx context.Context, id, text string) {
	o := e.out(bus.OutMessage, text)
	if id != "" {
		o.Kind, o.EditID = bus.OutEdit, id
	}
	o.Final = true
	if ids, sent, err := e.d.ob.Deliver(ctx, e.d.key, o, outbox.SendOpts{OnTx: e.firstTx(id)}); err == nil && sent.Kind == bus.OutMessage && len(ids) > 0 {
		e.setID(ids[0])
	}
}

// firstTx is onTx for a send that creates the editor's message (none
// exists yet: id is empty), else nil.
func (e *editor) firstTx(id string) func(*store.Tx, []string) error {
	if id != "" {
		return nil
	}
	return e.onTx
}

func (e *editor) setID(id string) {
	if id == "" {
		return
	}
	e.d.mu.Lock()
	e.msgID = id
	e.d.mu.Unlock()
	if e.sent != nil {
		e.sent(id)
	}
}
