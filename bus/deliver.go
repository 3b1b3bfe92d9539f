package bus

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
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
	ctx    context.Context // for the sends outside handle: it names the run in logs
	b      *Bus
	c      *conv // nil when not run through a conversation's queue
	in     *Inbound
	key    string
	stream bool
	every  time.Duration

	files    []event.File // presented during the run, sent after the answer
	streamed bool         // DeltaStreamer: text was written since the last final
	onFinal  func()       // called before the final answer is sent
	threadID string       // the run's thread (whose outputs hold the files)
	runID    string       // the run's id (its subagents' task replies are recorded with it)

	// The answer's outbox record (answerTx) and, once delivered, what was
	// sent; guarded by mu. answerHeld: answerTx is in use for this run.
	answerHeld bool
	answerSeq  uint64
	answerRec  *outRecord
	answerOut  *Outbound
	answerIDs  []string

	mu     sync.Mutex
	status string          // the run's overall progress (event.Status), shown first
	text   strings.Builder // the current step's answer text
	acts   []string
	main   *editor       // the progress message; nil for DeltaStreamers
	tasks  []*taskView   // subagents' progress replies, in start order
	typing chan struct{} // closed to end the typing loop; nil without a Typer
	ticker sync.WaitGroup
}

func newDelivery(ctx context.Context, b *Bus, c *conv, in *Inbound) *delivery {
	d := &delivery{ctx: ctx, b: b, c: c, in: in, key: in.ChatKey(), every: defaultEditInterval}
	s, ok := b.sender(in.Channel)
	if ok {
		if ds, ok := s.(DeltaStreamer); ok && ds.StreamsDeltas() {
			d.stream = true
		}
		if et, ok := s.(EditThrottler); ok {
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
		if err := t.Typing(d.ctx, d.out(OutMessage, "")); err != nil {
			d.b.log.DebugContext(d.ctx, "typing", "chat", d.key, "err", err)
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
func (d *delivery) handle(ctx context.Context, ev event.Event) {
	switch ev := ev.(type) {
	case event.TextDelta:
		if d.stream {
			d.streamed = true
			d.b.send(ctx, d.key, d.out(OutDelta, ev.Text))
			return
		}
		d.update(func() { d.text.WriteString(ev.Text) })
	case event.TextReset:
		if d.stream {
			d.b.send(ctx, d.key, d.out(OutActivity, "(the answer was cut off; retrying)"))
			return
		}
		d.update(func() { d.text.Reset() })
	case event.ToolCall:
		d.toolCall(ctx, ev)
	case event.ToolResult:
		if ev.IsError && d.stream {
			d.b.send(ctx, d.key, d.out(OutActivity, ev.Name+" failed: "+firstLine(ev.Result)))
		}
	case event.FilesPresented:
		d.files = append(d.files, ev.Files...)
	case event.Status:
		if d.stream {
			if ev.Line != "" {
				d.b.send(ctx, d.key, d.out(OutActivity, ev.Line))
			}
			return
		}
		d.update(func() { d.status = ev.Panel })
	case event.TaskStarted, event.TaskProgress, event.TaskDone:
		d.task(ctx, ev)
	case event.Answer:
		d.final(ctx, ev.Text, false)
	case event.Error:
		d.final(ctx, ev.Text, true)
	case event.Stopped:
		text := "Stopped."
		if !errors.Is(ev.Err, agent.ErrStopped) {
			text = "I had to stop in the middle of this because I'm restarting; once I'm back, send /retry to run your message again."
		}
		d.final(ctx, text, true)
	case event.Started, event.ReasoningDelta:
		// Nothing to show: the typing indicator says the run is on.
	case event.Clarification:
		// The answer that ends the run asks the question, with its
		// options numbered.
	default:
		d.b.log.WarnContext(ctx, "bus: an event the delivery does not know", "event", event.Name(ev))
	}
}

// toolCall shows a tool call about to run as an activity line.
func (d *delivery) toolCall(ctx context.Context, ev event.ToolCall) {
	line := ev.Name
	if ev.Summary != "" {
		line += ": " + ev.Summary
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

// final delivers the answer (or failure sentence) that ends the run,
// after the subagents' replies have shown their outcome.
func (d *delivery) final(ctx context.Context, text string, failed bool) {
	answer := !failed
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
		d.sendFinal(ctx, o, answer)
		return
	}
	id := d.main.halt()
	d.mu.Lock()
	if failed && id != "" {
		// What the progress message showed stays above the failure.
		shown := d.status
		if t := strings.TrimSpace(d.text.String()); t != "" {
			shown = strings.TrimSpace(shown + "\n\n" + t)
		}
		if shown != "" {
			text = shown + "\n\n" + text
		}
	}
	d.mu.Unlock()
	o := d.out(OutMessage, text)
	if id != "" {
		o.Kind, o.EditID = OutEdit, id
	}
	o.Final, o.Failed = true, failed
	d.sendFinal(ctx, o, answer)
}

// sendFinal sends the message that ends the run. The answer's outbox
// record was written with the answer itself (see answerTx); it is cleared
// once the run has ended, when that commit has surely landed.
func (d *delivery) sendFinal(ctx context.Context, o *Outbound, answer bool) {
	held := answer && d.answerHeld
	ids, sent, err := d.b.deliver(ctx, d.key, o, sendOpts{held: held})
	if held && err == nil {
		d.mu.Lock()
		d.answerOut, d.answerIDs = sent, ids
		d.mu.Unlock()
	}
}

// answerTx records the answer in the outbox inside the transaction that
// stores it (agent.Input.OnAnswer), so a crash at any point leaves either
// no answer or an answer that will be delivered. The record targets the
// progress message when it exists.
func (d *delivery) answerTx(tx *store.Tx, answer string) error {
	d.mu.Lock()
	o := d.out(OutMessage, answer)
	if d.main != nil && d.main.msgID != "" {
		o.Kind, o.EditID = OutEdit, d.main.msgID
	}
	d.mu.Unlock()
	o.Final = true
	rec := newRecord(d.key, "", o, d.b.opts.Now())
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	seq, err := d.b.holdTx(tx, data)
	if err != nil {
		return err
	}
	d.mu.Lock()
	if d.answerSeq != 0 && d.answerSeq != seq {
		d.b.release(d.answerSeq) // an earlier attempt of this transaction
	}
	d.answerSeq, d.answerRec = seq, rec
	d.mu.Unlock()
	return nil
}

// answerTxFunc is answerTx when the answer is recorded in the outbox.
func (d *delivery) answerTxFunc() func(*store.Tx, string) error {
	if !d.answerHeld {
		return nil
	}
	return d.answerTx
}

// previewTx runs in the transaction that maps the progress message's id:
// the id is known to answerTx from then on, and an answer recorded before
// it is turned into an edit of that message. (Write transactions run one
// at a time, so one of the two always sees the other.) After a crash the
// answer then replaces the progress message instead of joining it.
func (d *delivery) previewTx(tx *store.Tx, ids []string) error {
	d.mu.Lock()
	d.main.msgID = ids[0]
	seq := d.answerSeq
	o := d.answerRec
	d.mu.Unlock()
	if seq == 0 || o == nil {
		return nil
	}
	o.Kind, o.EditID = OutEdit, ids[0]
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return tx.ReplaceOutbox(seq, data)
}

// settleAnswer clears the answer's outbox record once the run has ended:
// the answer was delivered, or there was none. Otherwise the record stays
// for the replay.
func (d *delivery) settleAnswer() {
	d.mu.Lock()
	seq, out, ids := d.answerSeq, d.answerOut, d.answerIDs
	d.mu.Unlock()
	if seq == 0 {
		return
	}
	if out == nil {
		d.b.release(seq)
		return
	}
	d.b.confirm(seq, out, d.key, ids, nil)
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
		if _, _, err := d.b.deliver(ctx, d.key, o, sendOpts{threadID: d.threadID}); err != nil {
			d.b.send(ctx, d.key, d.out(OutMessage, "I couldn't send the file "+f.Name+"."))
		}
	}
	d.files = nil
}
