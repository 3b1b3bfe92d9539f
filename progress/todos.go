package progress

import (
	"context"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/plan"
)

// checklist is the run's plan (write_todos) as one message of its own,
// edited in place as items change, within the chat's edit budget like
// the progress message; it stays in the chat, showing the last state,
// above the answer. Guarded by Delivery.mu.
type checklist struct {
	text  string
	final bool
	ed    *editor
}

// todos takes a change of the run's checklist. Channels that stream get
// the checklist printed as a block on every change.
func (d *Delivery) todos(ctx context.Context, ev event.Todos) {
	text := plan.Panel(ev.Items)
	if d.stream {
		d.ob.Send(ctx, d.key, d.out(bus.OutMessage, text))
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.plan == nil {
		c := &checklist{}
		c.ed = d.newEditor(func() (string, bool) { return c.text, c.final }, d.out)
		d.plan = c
	}
	d.plan.text = text
	d.plan.ed.changed()
}

// finishChecklist shows the checklist's last state before the answer is
// sent.
func (d *Delivery) finishChecklist() {
	d.mu.Lock()
	c := d.plan
	if c != nil {
		c.final = true
		c.ed.changed()
	}
	d.mu.Unlock()
	if c != nil {
		<-c.ed.done
	}
}

// checklistLive reports whether the checklist message is still being
// edited. Callers hold d.mu.
func (d *Delivery) checklistLive() bool { return d.plan != nil && !d.plan.final }
