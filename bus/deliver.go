package bus

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/tools"
)

// defaultEditInterval spaces the edits of a streamed answer for channels
// that do not say otherwise.
const defaultEditInterval = time.Second

// maxActivityLines is how many recent tool lines an edited progress message
// shows.
const maxActivityLines = 5

// delivery turns one run's events into Outbound messages for its
// conversation. Channels that stream deltas get them as they come; the
// others get one message, edited at most once per interval (latest state
// wins, the agent is never blocked by a slow platform), then a final edit.
type delivery struct {
	b      *Bus
	c      *conv // nil when not run through a conversation's queue
	in     *Inbound
	key    string
	stream bool
	every  time.Duration

	files    []tools.File // presented during the run, sent after the answer
	streamed bool         // DeltaStreamer: text was written since the last final
	onFinal  func()       // called before the final answer is sent

	mu     sync.Mutex
	text   strings.Builder // the current step's answer text
	acts   []string
	main   *editor       // the progress message; nil for DeltaStreamers
	tasks  []*taskView   // subagents' progress replies, in start order
	typing chan struct{} // closed to end the typing loop; nil without a Typer
	ticker sync.WaitGroup
}

func newDelivery(b *Bus, c *conv, in *Inbound) *delivery {
	d := &delivery{b: b, c: c, in: in, key: in.ChatKey(), every: defaultEditInterval}
	s, ok := b.sender(in.Channel)
	if ok {
		if ds, ok := s.(DeltaStreamer); ok && ds.StreamsDeltas() {
			d.stream = true
		}
		if et, ok := s.(EditThrottler); ok {
			d.every = et.EditInterval(in.ChatID)
		}
	}
	if !d.stream {
		d.main = d.newEditor(func() (string, bool) {
			if d.tasksEnding() {
				return "", false // the subagents' outcomes go first
			}
			return d.render(), false
		}, d.out)
	}
	if t, ok := s.(Typer); ok {
		d.typing = make(chan struct{})
		d.ticker.Add(1)
		go d.typeLoop(t, d.typing)
	}
	return d
}

// typingEvery is how often "typing…" is renewed; platforms show it for
// about five seconds.
const typingEvery = 4 * time.Second

// typeLoop shows "typing…" until stop closes.
func (d *delivery) typeLoop(t Typer, stop <-chan struct{}) {
	defer d.ticker.Done()
	tick := time.NewTicker(typingEvery)
	defer tick.Stop()
	for {
		if err := t.Typing(context.Background(), d.out(OutMessage, "")); err != nil {
			d.b.log.Debug("typing", "chat", d.key, "err", err)
		}
		select {
		case <-tick.C:
		case <-stop:
			return
		}
	}
}

func (d *delivery) out(kind OutKind, text string) *Outbound {
	return &Outbound{Kind: kind, Channel: d.in.Channel, ChatID: d.in.ChatID, Topic: d.in.Topic, ReplyTo: d.in.MessageID, Text: text}
}

// handle takes one event from the run.
func (d *delivery) handle(ctx context.Context, ev agent.Event) {
	switch ev.Kind {
	case agent.EventTextDelta:
		if d.stream {
			d.streamed = true
			d.b.send(ctx, d.key, d.out(OutDelta, ev.Text))
			return
		}
		d.update(func() { d.text.WriteString(ev.Text) })
	case agent.EventTextReset:
		if d.stream {
			d.b.send(ctx, d.key, d.out(OutActivity, "(the answer was cut off; retrying)"))
			return
		}
		d.update(func() { d.text.Reset() })
	case agent.EventToolStart:
		line := ev.Tool.Name
		if ev.Tool.Summary != "" {
			line += ": " + ev.Tool.Summary
		}
		if d.stream {
			d.b.send(ctx, d.key, d.out(OutActivity, line))
			return
		}
		d.update(func() {
			// Text streamed before a tool round was the model thinking
			// aloud; the activity lines replace it.
			d.text.Reset()
			d.acts = append(d.acts, "› "+line)
			if len(d.acts) > maxActivityLines {
				d.acts = d.acts[len(d.acts)-maxActivityLines:]
			}
		})
	case agent.EventToolEnd:
		if ev.Tool.IsError && d.stream {
			d.b.send(ctx, d.key, d.out(OutActivity, ev.Tool.Name+" failed: "+firstLine(ev.Tool.Result)))
		}
	case agent.EventTool:
		if ev.Custom == nil {
			return
		}
		switch ev.Custom.Kind {
		case tools.EventFiles:
			if files, ok := ev.Custom.Data.([]tools.File); ok {
				d.files = append(d.files, files...)
			}
		case tools.EventTaskStarted, tools.EventTaskProgress, tools.EventTaskDone:
			if te, ok := ev.Custom.Data.(tools.TaskEvent); ok {
				d.task(ctx, ev.RunID, ev.Custom.Kind, &te)
			}
		}
	case agent.EventAnswer:
		d.final(ctx, ev.Text, false)
	case agent.EventError:
		d.final(ctx, ev.Text, true)
	case agent.EventStopped:
		text := "Stopped."
		if !errors.Is(ev.Err, agent.ErrStopped) {
			text = "I had to stop in the middle of this (the service is restarting); please send your message again."
		}
		d.final(ctx, text, true)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// update changes the progress message's state and asks its editor to show
// it.
func (d *delivery) update(f func()) {
	d.mu.Lock()
	f()
	d.main.changed()
	d.mu.Unlock()
}

func (d *delivery) render() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(d.text.String()))
	if len(d.acts) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(strings.Join(d.acts, "\n"))
	}
	return b.String()
}

// final delivers the answer (or failure sentence) that ends the run,
// after the subagents' replies have shown their outcome.
func (d *delivery) final(ctx context.Context, text string, failed bool) {
	if d.onFinal != nil {
		d.onFinal()
	}
	d.stopTyping()
	d.finishTasks()
	defer d.sendFiles(ctx)
	if d.stream {
		o := d.out(OutMessage, text)
		if d.streamed && !failed {
			o.Kind = OutDelta // the text is already on screen; just end it
			o.Text = ""
		}
		o.Final, o.Failed = true, failed
		d.streamed = false
		d.b.send(ctx, d.key, o)
		return
	}
	id := d.main.halt()
	d.mu.Lock()
	if failed && id != "" && strings.TrimSpace(d.text.String()) != "" {
		text = strings.TrimSpace(d.text.String()) + "\n\n" + text
	}
	d.mu.Unlock()
	if id != "" {
		o := d.out(OutEdit, text)
		o.EditID, o.Final, o.Failed = id, true, failed
		if _, err := d.b.send(ctx, d.key, o); err == nil {
			return
		}
	}
	o := d.out(OutMessage, text)
	o.Final, o.Failed = true, failed
	d.b.send(ctx, d.key, o)
}

func (d *delivery) stopTyping() {
	if d.typing != nil {
		close(d.typing)
		d.typing = nil
	}
	d.ticker.Wait()
}

// close ends every loop of the delivery without sending more.
func (d *delivery) close() {
	d.stopTyping()
	if d.main != nil {
		d.main.halt()
	}
	d.mu.Lock()
	tasks := d.tasks
	d.mu.Unlock()
	for _, t := range tasks {
		if t.ed != nil {
			t.ed.halt()
		}
	}
	d.forgetTasks()
}

// sendFiles delivers the files presented during the run, each once, after
// the answer that talks about them.
func (d *delivery) sendFiles(ctx context.Context) {
	seen := make(map[string]bool, len(d.files))
	for i := range d.files {
		f := &d.files[i]
		if seen[f.Path] {
			continue
		}
		seen[f.Path] = true
		o := d.out(OutFile, f.Name)
		o.File = f
		if _, err := d.b.send(ctx, d.key, o); err != nil {
			d.b.send(ctx, d.key, d.out(OutMessage, "I couldn't send the file "+f.Name+"."))
		}
	}
	d.files = nil
}
