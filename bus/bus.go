// Package bus carries messages between chat channels and the agent. Channels
// Publish Inbound messages; the router resolves each conversation
// (channel:chat[:topic]) to an agent thread, handles commands, queues text
// per conversation (one run at a time, in order) and turns the agent's
// events into Outbound messages that it hands to the channel's Sender.
//
// It imports agent, store and llm; never channels.
package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// Inbound is one message from a person.
type Inbound struct {
	Channel   string // "telegram", "slack", "lark", "console"
	ChatID    string
	Topic     string // a thread or topic inside the chat; "" for the chat itself
	UserID    string // the platform's user id
	UserName  string
	MessageID string // the platform's id of this message
	// ReplyTo is the platform id of the message this one answers. A reply
	// to any message of a conversation (the bot's or a person's)
	// continues that conversation.
	ReplyTo string
	// EventKey identifies the platform event that carried the message
	// ("telegram:update:5001"); a second Publish with the same key is
	// dropped, so redeliveries after a crash are handled once.
	EventKey string
	Text     string
	// Skill is set when the message activates a skill ("/<skill> task");
	// Text is then the task.
	Skill string `json:",omitempty"`
	// Research is set for a message of /research: "start" or "auto" (Text
	// is the topic), or "retry" (/retry, which resumes an unfinished
	// research when the conversation has one).
	Research string `json:",omitempty"`
	// Group is set when others than the sender and the bot see the
	// conversation (a group or channel), so private things (a person's
	// memory) are not shown there.
	Group bool `json:",omitempty"`
	// Files came with the message. They are stored with it (by Ref) and
	// fetched into the thread's uploads when its turn comes.
	Files []Attachment `json:",omitempty"`
	Time  time.Time
}

// Attachment is a file a person sent. Open is called once, by the router,
// to save it into the conversation's uploads. Ref is what the channel
// needs to fetch it again after a restart (see Reattacher).
type Attachment struct {
	Name string
	Size int64                         // -1 when unknown
	Ref  string                        `json:",omitempty"`
	Open func() (io.ReadCloser, error) `json:"-"`
}

// Reattacher is implemented by senders whose attachments can be fetched
// by Ref: a message stored with files before a restart gets them then.
type Reattacher interface {
	Reattach(ref string) func() (io.ReadCloser, error)
}

// ChatKey is the conversation's key: channel:chat[:topic].
func (in *Inbound) ChatKey() string {
	return ChatKey(in.Channel, in.ChatID, in.Topic)
}

// ChatKey builds a conversation key.
func ChatKey(channel, chat, topic string) string {
	k := channel + ":" + chat
	if topic != "" {
		k += ":" + topic
	}
	return k
}

// OutKind says what an Outbound asks the channel to do.
type OutKind int

const (
	// OutMessage sends a new message with Text (Markdown).
	OutMessage OutKind = iota
	// OutEdit replaces the text of the message EditID with Text.
	OutEdit
	// OutDelta appends Text to the answer being streamed (channels that
	// implement DeltaStreamer only).
	OutDelta
	// OutActivity is one line of tool activity (channels that implement
	// DeltaStreamer only; others see activity through edits).
	OutActivity
	// OutFile delivers File, a file the agent presented from its outputs.
	OutFile
)

// Outbound is one thing to show in a conversation.
type Outbound struct {
	Kind    OutKind
	Channel string
	ChatID  string
	Topic   string
	ReplyTo string // platform id of the message this answers, when known
	EditID  string // OutEdit: the message to edit
	Text    string
	// Final marks the last version of an answer (OutMessage or OutEdit):
	// channels render it fully (Markdown, splitting) where earlier
	// versions may be shown plainly.
	Final bool
	// Failed marks text that reports a failure (an error sentence, a
	// stopped run), for channels that style it.
	Failed bool
	File   *event.File // OutFile
	// Task is set on a subagent's progress reply: the task's id. Such a
	// reply always answers ReplyTo, in private chats too.
	Task string
}

// Sender delivers Outbound messages for one channel. Send returns the
// platform ids of the messages it created or edited, the first being the
// one a later OutEdit should target (a long answer may become several
// messages); none when the platform has no ids.
type Sender interface {
	Name() string
	Send(ctx context.Context, out *Outbound) (ids []string, err error)
}

// Typer is implemented by senders that can show "typing…" while a reply is
// being worked on. The router calls it about every four seconds.
type Typer interface {
	Typing(ctx context.Context, out *Outbound) error
}

// DeltaStreamer is implemented by senders that show an answer as it arrives
// (the terminal): they get OutDelta and OutActivity instead of edits.
type DeltaStreamer interface {
	StreamsDeltas() bool
}

// EditThrottler is implemented by senders that want edits of a streamed
// answer no more often than the returned interval for that chat.
type EditThrottler interface {
	EditInterval(chatID string) time.Duration
}

// Options configures a Bus.
type Options struct {
	Store     *store.Store // required
	Agent     *agent.Agent // required
	MaxQueued int          // waiting messages per conversation; 0 → 20
	Logger    *slog.Logger // nil: slog.Default()
	Version   string       // shown by /status
	Now       func() time.Time
	// SaveUpload stores an attachment in the thread's uploads and returns
	// the path the agent sees. Its error text is shown to the sender after
	// the file's name, so it must read as a short clause ("it is larger
	// than the upload limit of 50 MB"). Nil: attachments are refused
	// politely.
	SaveUpload func(threadID string, a Attachment) (path string, err error)
	// UploadsNote tells the model which files arrived with a message.
	// Nil: a plain list.
	UploadsNote func(paths []string) string
	// Memory answers /memory; nil means long-term memory is off.
	Memory Memory
	// Skills routes "/<skill> task" and answers /skills; nil: no skills.
	Skills Skills
	// Reopen finds a presented file again for a delivery retried after a
	// restart; nil: such files are not sent again.
	Reopen Reopener
	// Research runs /research; nil: the command is off.
	Research Research
	// Health gives /status lines about the service's parts that are
	// degraded (a sandbox without network, an MCP server down), each
	// one sentence ("Sandbox network: none: …"); nil or none: nothing.
	Health func() []string
}

// Research is /research as the router sees it. A research is a
// conversation: while it waits for the person (a question, the plan),
// their next message goes to it.
type Research interface {
	// Pending reports whether the thread's research waits for the
	// person's reply.
	Pending(threadID string) bool
	// Resumable reports whether the thread has a research that stopped
	// before its report and is not running.
	Resumable(threadID string) bool
	// Run handles one message as the thread's run, reporting like
	// agent.Run. mode is "start", "auto", "reply" or "resume".
	Run(ctx context.Context, mode string, in agent.Input) iter.Seq[event.Event]
	// Status describes the thread's research for /status ("" if none).
	Status(threadID string) string
	// Cancel drops a research that waits for the person or was
	// interrupted, reporting whether there was one.
	Cancel(threadID string) bool
}

// Skills is what the router needs of the skills.
type Skills interface {
	// Has reports whether name is an enabled skill.
	Has(name string) bool
	// Command answers "/skills args" from userID ("channel:user").
	Command(userID, args string) string
}

// Memory is long-term memory as the /memory command sees it.
type Memory interface {
	// Command answers "/memory args" from userID ("channel:user") in
	// chatKey; group says others can read the reply.
	Command(userID, chatKey string, group bool, args string) string
}

// Bus is the router between channels and the agent.
type Bus struct {
	opts    Options
	log     *slog.Logger
	started time.Time

	mu      sync.Mutex
	senders map[string]Sender
	convs   map[string]*conv
	closed  bool
	live    map[uint64]bool // stored messages queued or running in this process
	// inflight: outbox records being sent by this process, which the
	// replay leaves alone.
	inflight map[uint64]bool
	pruned   time.Time // when old event ids were last forgotten

	stopLoops context.CancelFunc // ends Start's background work
	loops     sync.WaitGroup
	idle      *sync.Cond // signalled when a conversation's worker exits
	workers   int
}

// New returns a Bus.
func New(opts Options) (*Bus, error) {
	if opts.Store == nil || opts.Agent == nil {
		return nil, errors.New("bus: store and agent are required")
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	b := &Bus{
		opts:     opts,
		log:      opts.Logger,
		started:  opts.Now(),
		senders:  make(map[string]Sender),
		convs:    make(map[string]*conv),
		live:     make(map[uint64]bool),
		inflight: make(map[uint64]bool),
	}
	b.idle = sync.NewCond(&b.mu)
	return b, nil
}

// Register adds the sender for its channel.
func (b *Bus) Register(s Sender) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.senders[s.Name()] = s
}

func (b *Bus) sender(channel string) (Sender, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.senders[channel]
	return s, ok
}

// ErrClosed is returned by Publish after Close.
var ErrClosed = errors.New("bus: closed")

// Publish hands a person's message to the router. Commands are answered at
// once; other text joins its conversation's queue and Publish returns
// without waiting for the answer. An error means the message was not
// accepted (the channel should not acknowledge it).
func (b *Bus) Publish(ctx context.Context, in *Inbound) error {
	in.Text = strings.TrimSpace(in.Text)
	if in.Text == "" && len(in.Files) == 0 {
		return nil
	}
	if in.Time.IsZero() {
		in.Time = b.opts.Now()
	}
	b.resolveReply(in)
	if b.seen(in) {
		return nil
	}
	if name, args, ok := parseCommand(in.Text); ok {
		skill := b.skill(name)
		if skill != "" && args != "" {
			in.Skill, in.Text = skill, args
			return b.enqueue(ctx, in)
		}
		if name == "research" && b.opts.Research != nil {
			if mode, topic := researchArgs(args); topic != "" {
				in.Research, in.Text = mode, topic
				return b.enqueue(ctx, in)
			}
		}
		if _, dup, err := b.record(in, false); err != nil || dup {
			return err
		}
		if skill != "" {
			return b.reply(ctx, in, fmt.Sprintf("Tell me what to do with the %s skill: /%s <your task>.", skill, name))
		}
		return b.command(ctx, in, name, args)
	}
	return b.enqueue(ctx, in)
}

// skill returns the skill a "/name" message activates, or "": an enabled
// skill called name (or, for Telegram's command style, with _ for -),
// unless a command has that name.
func (b *Bus) skill(name string) string {
	if b.opts.Skills == nil || isCommand(name) {
		return ""
	}
	for _, n := range []string{name, strings.ReplaceAll(name, "_", "-")} {
		if b.opts.Skills.Has(n) {
			return n
		}
	}
	return ""
}

// reply sends a plain message into in's conversation.
func (b *Bus) reply(ctx context.Context, in *Inbound, text string) error {
	_, err := b.send(ctx, in.ChatKey(), &Outbound{
		Kind: OutMessage, Channel: in.Channel, ChatID: in.ChatID, Topic: in.Topic,
		ReplyTo: in.MessageID, Text: text, Final: true,
	})
	return err
}

// send delivers out and records the id of what was sent against the
// conversation, so a reply to it continues that conversation. What matters
// after a crash goes through the outbox (see outbox.go). It returns the id
// a later edit should target.
func (b *Bus) send(ctx context.Context, chatKey string, out *Outbound) (string, error) {
	ids, _, err := b.deliver(ctx, chatKey, out, sendOpts{})
	if len(ids) == 0 {
		return "", err
	}
	return ids[0], err
}

// sendOpts are deliver's options.
type sendOpts struct {
	threadID string // needed for files
	// held: the caller recorded the send in the outbox and confirms it
	// later, with the returned ids and the Outbound actually sent.
	held bool
	// onTx runs inside the transaction that records the confirmed ids.
	onTx func(tx *store.Tx, ids []string) error
}

// deliver sends out, recorded in the outbox first when it is durable. A
// final edit that fails becomes a new message.
func (b *Bus) deliver(ctx context.Context, chatKey string, out *Outbound, o sendOpts) ([]string, *Outbound, error) {
	s, ok := b.sender(out.Channel)
	if !ok {
		return nil, out, errors.New("bus: no sender for channel " + out.Channel)
	}
	var seq uint64
	if !o.held {
		seq = b.hold(chatKey, o.threadID, out)
	}
	ids, err := s.Send(ctx, out)
	if err != nil && out.Kind == OutEdit && out.Final {
		b.log.InfoContext(ctx, "editing failed; sending the text as a new message", "channel", out.Channel, "chat", out.ChatID, "err", err)
		m := *out
		m.Kind, m.EditID = OutMessage, ""
		out = &m
		ids, err = s.Send(ctx, out)
	}
	if err != nil {
		b.log.WarnContext(ctx, "send failed", "channel", out.Channel, "chat", out.ChatID, "kind", out.Kind, "err", err)
		b.release(seq) // kept for the replay
		return nil, out, err
	}
	if !o.held {
		b.confirm(seq, out, chatKey, ids, o.onTx)
	}
	return ids, out, nil
}

// WaitIdle blocks until no conversation has queued or running work, or ctx
// is done.
func (b *Bus) WaitIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.idle.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.workers > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.idle.Wait()
	}
	return nil
}

// Start delivers what a previous process left in the outbox, then keeps
// retrying unconfirmed sends (and forgetting old event ids) in the
// background until Close. Call it once the channels' senders are
// registered.
func (b *Bus) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	b.mu.Lock()
	b.stopLoops = cancel
	b.mu.Unlock()
	b.loops.Add(1)
	go func() {
		defer b.loops.Done()
		b.ReplayOutbox(ctx)
		b.pruneSeen()
		b.retryLoop(ctx)
	}()
}

// Close stops accepting messages and lets the running turns finish for up
// to grace; then it cancels the rest with cause and waits for them to
// record their state (or ctx to end). Queued messages that never ran stay
// stored; Recover runs them after a restart.
func (b *Bus) Close(ctx context.Context, grace time.Duration, cause error) {
	b.mu.Lock()
	b.closed = true
	waiting := 0
	for _, c := range b.convs {
		waiting += len(c.queue)
		c.queue = nil
	}
	running, stop := b.workers, b.stopLoops
	b.mu.Unlock()
	if stop != nil {
		stop()
	}
	if running > 0 && grace > 0 {
		b.log.Info("letting running replies finish", "running", running, "grace", grace.String(), "queued_for_restart", waiting)
		gctx, cancel := context.WithTimeout(ctx, grace)
		b.WaitIdle(gctx)
		cancel()
	}
	b.opts.Agent.StopAll(ctx, cause)
	b.WaitIdle(ctx)
	b.loops.Wait()
}

// Depth returns how many messages wait behind running replies, across
// conversations, and how many replies are running.
func (b *Bus) Depth() (queued, running int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.convs {
		queued += len(c.queue)
	}
	return queued, b.workers
}
