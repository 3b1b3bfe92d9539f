// Package progress is the live-progress renderer: it turns one run's typed
// events (event.Event) into the messages a chat shows — the answer
// streamed by editing one message at most once per interval, one threaded
// reply per subagent task, the files presented, "typing…" meanwhile — and
// sends them through the outbox. Its state is its own; what the router
// needs to know (the answer is going out, a task started or ended) it
// learns through the callbacks in Options.
//
// It imports bus, outbox, event, agent (for agent.ErrStopped), store and
// tools; never router or channels.
package progress

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/choice"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/outbox"
	"github.com/deerflow/deerflow/store"
)

// defaultEditInterval spaces the edits of a streamed answer for channels
// that do not say otherwise.
const defaultEditInterval = time.Second

// maxActivityLines is how many recent tool lines an edited progress message
// shows.
const maxActivityLines = 5

// Options configures a Delivery.
type Options struct {
	Outbox *outbox.Outbox // required: sends, and finds the channel's sender
	// Store records which message is a subagent's progress reply (see
	// store.Task); nil: not recorded.
	Store  *store.Store
	Logger *slog.Logger // nil: slog.Default()
	Now    func() time.Time
	// ThreadID is the run's thread, whose outputs hold its files.
	ThreadID string
	// RunID is the run's id; its subagents' replies are recorded with it.
	RunID string
	// OnFinal, when set, is called before the final answer is sent.
	OnFinal func()
	// OnTask, when set, is told every subagent task event of the run
	// (done: the task has ended).
	OnTask func(t event.Task, done bool)
	// OnTasksEnd, when set, is called once the run's subagent replies are
	// over: each has shown its outcome, or the delivery was closed.
	OnTasksEnd func()
	// RestartText is what a run stopped by a restart ends with; "" is the
	// chat message's (send /retry once I'm back).
	RestartText string
}

// Delivery turns one run's events into Outbound messages for its
// conversation. Channels that stream deltas get them as they come; the
// others get one message, edited at most once per interval (latest state
// wins, the agent is never blocked by a slow platform), then a final edit.
type Delivery struct {
	ctx    context.Context // for the sends outside Handle: it names the run in logs
	opts   Options
	ob     *outbox.Outbox
	log    *slog.Logger
	in     *bus.Inbound
	key    string
	stream bool
	every  time.Duration

	files    []event.File // presented during the run, sent after the answer
	streamed bool         // DeltaStreamer: text was written since the last final

	// The answer's outbox record (answerTx) and, once delivered, what was
	// sent; guarded by mu. answerHeld: answerTx is in use for this run.
	answerHeld bool
	answerSeq  uint64
	answerRec  *outbox.Record
	answerOut  *bus.Outbound
	answerIDs  []string
	// choice is the clarification's options, stored with the answer
	// (choiceTx); choiceSaved once they were.
	choice      *choice.Record
	choiceSaved bool
	choiceKeep  bool // the answered message keeps the whole answer

	mu      sync.Mutex
	preface string          // shown above everything else (Preface)
	status  string          // the run's overall progress (event.Status), shown first
	text    strings.Builder // the current step's answer text
	acts    []string
	main    *editor       // the progress message; nil for DeltaStreamers
	tasks   []*taskView   // subagents' progress replies, in start order
	plan    *checklist    // the run's checklist message (write_todos); nil until there is one
	typing  chan struct{} // closed to end the typing loop; nil without a Typer
	ticker  sync.WaitGroup
}

// New starts the delivery of one run answering in: "typing…" shows
// after typingAfter where the channel has it. ctx is used for the sends outside Handle
// (it names the run in logs). Call Close when the run has ended.
func New(ctx context.Context, in *bus.Inbound, opts Options) *Delivery {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := &Delivery{ctx: ctx, opts: opts, ob: opts.Outbox, log: opts.Logger, in: in, key: in.ChatKey(), every: defaultEditInterval}
	s, ok := d.ob.Sender(in.Channel)
	if ok {
		if ds, ok := s.(bus.DeltaStreamer); ok && ds.StreamsDeltas() {
			d.stream = true
		}
		if et, ok := s.(bus.EditThrottler); ok {
			d.every = et.EditInterval(in.ChatID)
		}
	}
	// The answer is recorded in the outbox with the answer itself, except
	// when it streams (the terminal): it is on screen as it comes, and
	// there is nothing to deliver again after a crash.
	d.answerHeld = !d.stream
	if !d.stream {
		d.main = d.newEditor(func() (string, bool) {
			if d.tasksEnding() {
				return "", false // the subagents' outcomes go first
			}
			return d.render(), false
		}, d.out)
		d.main.onTx = d.previewTx
	}
	if t, ok := s.(bus.Typer); ok {
		d.typing = make(chan struct{})
		d.ticker.Add(1)
		go d.typeLoop(t, d.typing)
	}
	return d
}

func (d *Delivery) now() time.Time { return d.opts.Now() }

// typingEvery is how often "typing…" is renewed; platforms show it for
// about five seconds.
const typingEvery = 4 * time.Second

// typingAfter is how long a run goes before "typing…" shows. An answer
// ready sooner needs no sign of life (and makes no call that counts
// against the platform's limits, or that the answer would wait for);
// later, typing still shows well within 300 ms of the message.
const typingAfter = 100 * time.Millisecond

// typeLoop shows "typing…" from typingAfter until stop closes.
func (d *Delivery) typeLoop(t bus.Typer, stop <-chan struct{}) {
	defer d.ticker.Done()
	first := time.NewTimer(typingAfter)
	defer first.Stop()
	select {
	case <-first.C:
	case <-stop:
		return
	}
	tick := time.NewTicker(typingEvery)
	defer tick.Stop()
	for {
		if err := t.Typing(d.ctx, d.out(bus.OutMessage, "")); err != nil {
			d.log.DebugContext(d.ctx, "typing", "chat", d.key, "err", err)
		}
		select {
		case <-tick.C:
		case <-stop:
			return
		}
	}
}

func (d *Delivery) out(kind bus.OutKind, text string) *bus.Outbound {
	return &bus.Outbound{Kind: kind, Channel: d.in.Channel, ChatID: d.in.ChatID, Topic: d.in.Topic, ReplyTo: d.in.MessageID, Text: text}
}

// Handle takes one event from the run.
func (d *Delivery) Handle(ctx context.Context, ev event.Event) {
	switch ev := ev.(type) {
	case event.TextDelta:
		if d.stream {
			d.streamed = true
			d.ob.Send(ctx, d.key, d.out(bus.OutDelta, ev.Text))
			return
		}
		d.update(func() { d.text.WriteString(ev.Text) })
	case event.TextReset:
		if d.stream {
			o := d.out(bus.OutActivity, "(the answer was cut off; retrying)")
			o.Retry = true
			d.ob.Send(ctx, d.key, o)
			return
		}
		d.update(func() { d.text.Reset() })
	case event.ToolCall:
		d.toolCall(ctx, ev)
	case event.ToolResult:
		if ev.IsError && d.stream {
			d.ob.Send(ctx, d.key, d.out(bus.OutActivity, ev.Name+" failed: "+firstLine(ev.Result)))
		}
	case event.FilesPresented:
		d.files = append(d.files, ev.Files...)
	case event.Status:
		d.statusLine(ctx, ev)
	case event.TaskStarted, event.TaskProgress, event.TaskDone:
		d.task(ctx, ev)
	case event.Answer, event.Error, event.Stopped:
		d.end(ctx, ev)
	case event.Started, event.ReasoningDelta:
		// Nothing to show: the typing indicator says the run is on.
	case event.Todos:
		d.todos(ctx, ev)
	case event.Clarification:
		// The answer that ends the run asks the question, with its
		// options numbered; they also go as buttons (see choiceTx).
		d.clarify(ev)
	default:
		d.log.WarnContext(ctx, "progress: an event the delivery does not know", "event", event.Name(ev))
	}
}

// statusLine shows the run's overall progress: as an activity line where
// the channel streams, else at the top of the progress message.
func (d *Delivery) statusLine(ctx context.Context, ev event.Status) {
	if d.stream {
		if ev.Line != "" {
			d.ob.Send(ctx, d.key, d.out(bus.OutActivity, ev.Line))
		}
		return
	}
	d.update(func() { d.status = ev.Panel })
}

// end delivers the event that ends the run: its answer, its failure or
// its stop.
func (d *Delivery) end(ctx context.Context, ev event.Event) {
	switch ev := ev.(type) {
	case event.Answer:
		d.final(ctx, ev.Text, false)
	case event.Error:
		d.final(ctx, ev.Text, true)
	case event.Stopped:
		text := "Stopped."
		if !errors.Is(ev.Err, agent.ErrStopped) {
			text = cmp.Or(d.opts.RestartText, "I had to stop in the middle of this because I'm restarting; once I'm back, send /retry to run your message again.")
		}
		d.final(ctx, text, true)
	}
}

// toolCall shows a tool call about to run as an activity line.
func (d *Delivery) toolCall(ctx context.Context, ev event.ToolCall) {
	line := ev.Name
	if ev.Summary != "" {
		line += ": " + ev.Summary
	}
	if d.stream {
		d.ob.Send(ctx, d.key, d.out(bus.OutActivity, line))
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
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// update changes the progress message's state and asks its editor to show
// it.
func (d *Delivery) update(f func()) {
	d.mu.Lock()
	f()
	d.main.changed()
	d.mu.Unlock()
}

func (d *Delivery) render() string {
	var b strings.Builder
	b.WriteString(d.preface)
	if d.status != "" && b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(d.status)
	if t := strings.TrimSpace(d.text.String()); t != "" {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(t)
	}
	if len(d.acts) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(strings.Join(d.acts, "\n"))
	}
	return b.String()
}

func (d *Delivery) stopTyping() {
	if d.typing != nil {
		close(d.typing)
		d.typing = nil
	}
	d.ticker.Wait()
}

// Close ends every loop of the delivery without sending more.
func (d *Delivery) Close() {
	d.stopTyping()
	if d.main != nil {
		d.main.halt()
	}
	d.mu.Lock()
	tasks, c := d.tasks, d.plan
	d.mu.Unlock()
	for _, t := range tasks {
		if t.ed != nil {
			t.ed.halt()
		}
	}
	if c != nil {
		c.ed.halt()
	}
	d.forgetTasks()
}

// sendFiles delivers the files presented during the run, each once, after
// the answer that talks about them.
func (d *Delivery) sendFiles(ctx context.Context) {
	seen := make(map[string]bool, len(d.files))
	for i := range d.files {
		f := &d.files[i]
		if seen[f.Path] {
			continue
		}
		seen[f.Path] = true
		o := d.out(bus.OutFile, f.Name)
		o.File = f
		if _, _, err := d.ob.Deliver(ctx, d.key, o, outbox.SendOpts{ThreadID: d.opts.ThreadID}); err != nil {
			d.ob.Send(ctx, d.key, d.out(bus.OutMessage, "I couldn't send the file "+f.Name+"."))
		}
	}
	d.files = nil
}
