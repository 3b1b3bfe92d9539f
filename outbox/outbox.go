// Package outbox makes the sends that matter durable. Every send that
// matters after a crash (an answer, a command's reply, a file, a
// subagent's outcome, a notice) is recorded in the store before it is
// attempted and cleared when the platform confirms it. What is left (the
// process died mid-send, or the platform kept failing) is sent again by
// Replay at start, and while running by Run's retry loop with a growing
// pause (5 s, 10 s, 20 s, … up to 10 minutes). Streamed previews and
// typing are not recorded: after a restart they no longer matter, and the
// final version replaces them.
//
// Delivery is at least once: a crash between the platform's confirmation
// and the clearing commit sends that message again after the restart. An
// edit (the usual form of an answer) is idempotent, so only a new message
// can show twice.
//
// The outbox also keeps the channels' senders and maps the ids of what it
// sent to their conversation (the bot-message → conversation map), so a
// reply to a bot message continues that conversation.
//
// It imports bus, event and store; never router, progress or channels.
package outbox

import (
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

const (
	// maxAge is how long an unconfirmed send stays worth sending.
	maxAge = 24 * time.Hour
	// maxAttempts is how many replays a send gets before it is dropped
	// (and logged): with the pauses below, a platform may be unreachable
	// for about two and a half hours.
	maxAttempts = 20
	// retryEvery is how often the retry loop looks for sends due.
	retryEvery = 5 * time.Second
	// maxPause caps the pause between two attempts of a send.
	maxPause = 10 * time.Minute
)

// Reopener finds a presented file again (its thread, its virtual path),
// for a delivery retried after a restart.
type Reopener func(threadID, path string) (event.File, error)

// Options configures an Outbox.
type Options struct {
	Store  *store.Store // required
	Logger *slog.Logger // nil: slog.Default()
	Now    func() time.Time
	// Reopen finds a presented file again for a delivery retried after a
	// restart; nil: such files are not sent again.
	Reopen Reopener
}

// Outbox sends Outbound messages through the registered senders, recording
// the durable ones until the platform confirms them.
type Outbox struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	senders map[string]bus.Sender
	// inflight: records being sent by this process, which the replay
	// leaves alone.
	inflight map[uint64]bool
	sent     *sent // ids not yet committed, sends under way (sent.go)
}

// New returns an Outbox.
func New(opts Options) (*Outbox, error) {
	if opts.Store == nil {
		return nil, errors.New("outbox: a store is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Outbox{
		opts:     opts,
		log:      opts.Logger,
		senders:  make(map[string]bus.Sender),
		inflight: make(map[uint64]bool),
		sent:     newSent(),
	}, nil
}

// Register adds the sender for its channel.
func (o *Outbox) Register(s bus.Sender) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.senders[s.Name()] = s
}

// Sender returns the sender registered for channel.
func (o *Outbox) Sender(channel string) (bus.Sender, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.senders[channel]
	return s, ok
}

// Record is an Outbound as the outbox keeps it.
type Record struct {
	ChatKey  string         `json:"chat"`
	ThreadID string         `json:"thread,omitempty"` // OutFile: whose outputs hold File
	Kind     bus.OutKind    `json:"kind"`
	Channel  string         `json:"channel"`
	ChatID   string         `json:"chat_id"`
	Topic    string         `json:"topic,omitempty"`
	ReplyTo  string         `json:"reply_to,omitempty"`
	EditID   string         `json:"edit_id,omitempty"`
	Text     string         `json:"text,omitempty"`
	Failed   bool           `json:"failed,omitempty"`
	Task     string         `json:"task,omitempty"`
	File     string         `json:"file,omitempty"` // OutFile: the virtual path
	Buttons  [][]bus.Button `json:"buttons,omitempty"`
	Created  time.Time      `json:"created"`
	Attempts int            `json:"attempts,omitempty"`
	Tried    time.Time      `json:"tried,omitzero"` // the last failed replay
}

// due reports whether the retry loop should try r again: 5 s after it
// was recorded (the first send failed, or its process died), then after
// pauses doubling with each failed replay.
func (r *Record) due(now time.Time) bool {
	base := r.Created
	if !r.Tried.IsZero() {
		base = r.Tried
	}
	pause := retryEvery << min(r.Attempts, 10)
	return now.Sub(base) >= min(pause, maxPause)
}

// NewRecord is out as the outbox keeps it, for the conversation chatKey;
// threadID is needed for files.
func NewRecord(chatKey, threadID string, out *bus.Outbound, now time.Time) *Record {
	r := &Record{ChatKey: chatKey, ThreadID: threadID, Kind: out.Kind, Channel: out.Channel,
		ChatID: out.ChatID, Topic: out.Topic, ReplyTo: out.ReplyTo, EditID: out.EditID,
		Text: out.Text, Failed: out.Failed, Task: out.Task, Buttons: out.Buttons, Created: now}
	if out.File != nil {
		r.File = out.File.Path
	}
	return r
}

func (r *Record) outbound() *bus.Outbound {
	return &bus.Outbound{Kind: r.Kind, Channel: r.Channel, ChatID: r.ChatID, Topic: r.Topic,
		ReplyTo: r.ReplyTo, EditID: r.EditID, Text: r.Text, Final: true, Failed: r.Failed, Task: r.Task, Buttons: r.Buttons}
}

// durable reports whether out is recorded in the outbox before it is sent.
func durable(out *bus.Outbound) bool {
	switch out.Kind {
	case bus.OutMessage, bus.OutEdit:
		return out.Final
	case bus.OutFile:
		return true
	}
	return false
}

// PutTx records rec inside tx, for the replay to send (not in flight).
func PutTx(tx *store.Tx, rec *Record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = tx.PutOutbox(data)
	return err
}

// ReplaceTx rewrites the record seq inside tx.
func ReplaceTx(tx *store.Tx, seq uint64, rec *Record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return tx.ReplaceOutbox(seq, data)
}

// hold records out in the outbox and marks it in flight; 0 when it is not
// durable or could not be recorded (it is sent anyway).
func (o *Outbox) hold(chatKey, threadID string, out *bus.Outbound) uint64 {
	if !durable(out) {
		return 0
	}
	rec := NewRecord(chatKey, threadID, out, o.opts.Now())
	var seq uint64
	err := o.opts.Store.Batch(func(tx *store.Tx) error {
		var err error
		seq, err = o.HoldTx(tx, rec)
		return err
	})
	if err != nil {
		o.log.Error("recording a send in the outbox", "chat", chatKey, "err", err)
		return 0
	}
	return seq
}

// HoldTx records rec inside tx and marks it in flight, so the replay
// leaves it to its sender, who ends the flight with Confirm or Release.
func (o *Outbox) HoldTx(tx *store.Tx, rec *Record) (uint64, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	seq, err := tx.PutOutbox(data)
	if err != nil {
		return 0, err
	}
	o.mu.Lock()
	o.inflight[seq] = true
	o.mu.Unlock()
	return seq, nil
}

// Release ends a send's flight (seq 0: none); the record stays for the
// replay unless Confirm clears it.
func (o *Outbox) Release(seq uint64) {
	if seq == 0 {
		return
	}
	o.mu.Lock()
	delete(o.inflight, seq)
	o.mu.Unlock()
}

// Confirm clears the outbox record seq (0: none) and maps the ids the
// platform gave for out to the conversation chatKey, so replies to them
// continue it, in one transaction, which also runs onTx (if set) with the
// ids. It ends the send's flight.
func (o *Outbox) Confirm(seq uint64, out *bus.Outbound, chatKey string, ids []string, onTx func(*store.Tx, []string) error) {
	defer o.Release(seq)
	if out.Kind == bus.OutEdit && len(ids) == 1 && ids[0] == out.EditID {
		ids = nil // already mapped when it was first sent
	}
	if out.Kind == bus.OutDelta || out.Kind == bus.OutActivity {
		ids = nil
	}
	if seq == 0 && len(ids) == 0 {
		return
	}
	err := o.opts.Store.Batch(func(tx *store.Tx) error {
		if onTx != nil && len(ids) > 0 {
			if err := onTx(tx, ids); err != nil {
				return err
			}
		}
		if seq != 0 {
			if err := tx.DeleteOutbox(seq); err != nil {
				return err
			}
		}
		for _, id := range ids {
			if err := tx.PutBotMessage(out.Channel, out.ChatID, id, chatKey); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		o.log.Error("recording a confirmed send", "channel", out.Channel, "err", err)
	}
	o.sent.committed(out, ids)
}

// drop clears an outbox record that will never be sent.
func (o *Outbox) drop(seq uint64) {
	defer o.Release(seq)
	if err := o.opts.Store.Batch(func(tx *store.Tx) error { return tx.DeleteOutbox(seq) }); err != nil {
		o.log.Error("clearing the outbox", "err", err)
	}
}
