package choice

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
)

// Ask is the kind of a question a running tool waits on (an external
// agent's permission request): a press or a typed answer wakes the tool.
const Ask = "ask"

// Poster sends into a conversation: the router, through its outbox.
type Poster interface {
	// Post sends out into the conversation chatKey and returns the
	// platform's id of the message.
	Post(ctx context.Context, chatKey string, out *bus.Outbound) (string, error)
	// ShowsButtons reports whether channel shows buttons.
	ShowsButtons(channel string) bool
}

// Errors of Asks.Ask.
var (
	// ErrNobody: the conversation has no one to ask (a run from the HTTP
	// API, a channel that is not connected).
	ErrNobody = errors.New("nobody can be asked in this conversation")
	// ErrNoAnswer: the wait ended without an answer.
	ErrNoAnswer = errors.New("no answer in time")
)

// Asks are the questions running tools wait on. A question is a Record
// of kind Ask, stored like every choice, so a press is claimed the same
// way (once, by the person asked); the waiting tool is only in memory,
// so after a restart its buttons are no longer active.
type Asks struct {
	st  *store.Store
	now func() time.Time

	mu      sync.Mutex
	post    Poster
	waiting []*waiter // oldest first
}

type waiter struct {
	rec    *Record
	msgID  string        // guarded by Asks.mu; set before posted is closed
	posted chan struct{} // closed once the question's message was sent (or not)
	answer chan int      // buffered: the one answer
}

// NewAsks returns an empty set of questions; SetPoster connects it to
// the conversations.
func NewAsks(st *store.Store, now func() time.Time) *Asks {
	if now == nil {
		now = time.Now
	}
	return &Asks{st: st, now: now}
}

// SetPoster sets how questions are sent.
func (a *Asks) SetPoster(p Poster) {
	a.mu.Lock()
	a.post = p
	a.mu.Unlock()
}

// Ask sends question into the conversation chatKey with options as
// buttons (a numbered list where the channel shows none) and waits up to
// wait for userID ("channel:user") to choose one, by a press or by typing
// its number or its label. It returns the option's index; ErrNoAnswer
// when wait passed, ctx's error when ctx ended, ErrNobody when the
// question could not be sent. The question's message then says how it
// ended.
func (a *Asks) Ask(ctx context.Context, chatKey, userID, question string, options []string, wait time.Duration) (int, error) {
	a.mu.Lock()
	post := a.post
	a.mu.Unlock()
	channel, chat, topic := bus.SplitChatKey(chatKey)
	if post == nil || chat == "" || len(options) == 0 {
		return 0, ErrNobody
	}
	rec := &Record{
		ID: NewID(), Kind: Ask, ChatKey: chatKey, UserID: strings.TrimPrefix(userID, channel+":"),
		Group: true, Text: question, Options: options, Created: a.now(),
	}
	if err := a.st.Update(func(tx *store.Tx) error { return PutTx(tx, rec) }); err != nil {
		return 0, fmt.Errorf("storing the question: %w", err)
	}
	w := &waiter{rec: rec, answer: make(chan int, 1), posted: make(chan struct{})}
	a.add(w) // before the message: a press may come at once
	defer a.remove(w)
	out := &bus.Outbound{Kind: bus.OutMessage, Channel: channel, ChatID: chat, Topic: topic, Text: question, Final: true}
	if post.ShowsButtons(channel) {
		out.Buttons = rec.Buttons()
	} else {
		out.Text = numbered(question, options)
	}
	// The person may answer before Post returns (it confirms the send in
	// the store after the platform answered): edits wait for posted.
	id, err := post.Post(ctx, chatKey, out)
	a.mu.Lock()
	w.msgID = id
	a.mu.Unlock()
	close(w.posted)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNobody, err)
	}
	return a.await(ctx, w, wait)
}

// numbered is the question with its options as a list to answer by
// number, for channels without buttons.
func numbered(question string, options []string) string {
	var b strings.Builder
	b.WriteString(question)
	b.WriteString("\n")
	for i, o := range options {
		fmt.Fprintf(&b, "\n%d. %s", i+1, o)
	}
	b.WriteString("\n\nReply with a number.")
	return b.String()
}

// await waits for w's answer, ctx or the end of wait. Without an answer,
// the question is closed (a later press finds it answered) and its
// message says why.
func (a *Asks) await(ctx context.Context, w *waiter, wait time.Duration) (int, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var err error
	var note string
	select {
	case opt := <-w.answer:
		return opt, nil
	case <-ctx.Done():
		err, note = ctx.Err(), "⏹ Stopped before an answer."
	case <-timer.C:
		err, note = ErrNoAnswer, fmt.Sprintf("⌛ No answer within %s; taken as no.", wait.Round(time.Second))
	}
	if !a.close(w.rec.ID) {
		select { // answered as the wait ended: the answer counts
		case opt := <-w.answer:
			return opt, nil
		default:
		}
	}
	a.edit(context.WithoutCancel(ctx), w, note)
	return 0, err
}

// close marks the question answered with no answer, reporting whether
// it was still open.
func (a *Asks) close(id string) bool {
	open := false
	err := a.st.Update(func(tx *store.Tx) error {
		rec, err := GetTx(tx, id)
		if err != nil || rec.Answered {
			return err
		}
		open = true
		rec.Answered, rec.Answer = true, "no answer"
		return PutTx(tx, rec)
	})
	return open || err != nil
}

// edit shows how the question ended (note): its message is edited to
// the question and note, without buttons; a channel that gave no id to
// edit (the terminal) gets the note as a message.
func (a *Asks) edit(ctx context.Context, w *waiter, note string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case <-w.posted:
	case <-ctx.Done():
		return
	}
	a.mu.Lock()
	post, msgID := a.post, w.msgID
	a.mu.Unlock()
	if post == nil {
		return
	}
	channel, chat, topic := bus.SplitChatKey(w.rec.ChatKey)
	out := &bus.Outbound{Kind: bus.OutMessage, Channel: channel, ChatID: chat, Topic: topic, Text: note, Final: true}
	if msgID != "" {
		out.Kind, out.EditID, out.Text = bus.OutEdit, msgID, w.rec.Text+"\n\n"+note
	}
	post.Post(ctx, w.rec.ChatKey, out)
}

func (a *Asks) add(w *waiter) {
	a.mu.Lock()
	a.waiting = append(a.waiting, w)
	a.mu.Unlock()
}

func (a *Asks) remove(w *waiter) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, x := range a.waiting {
		if x == w {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			return
		}
	}
}

// Answer gives option opt to the tool waiting on question id, which a
// press has claimed; false when nothing waits on it any more.
func (a *Asks) Answer(id string, opt int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.waiting {
		if w.rec.ID == id {
			select {
			case w.answer <- opt:
				return true
			default:
				return false // answered already
			}
		}
	}
	return false
}

// Typed answers the oldest question waiting in in's conversation when in
// is its asked person typing an option's number or label; it reports
// whether in was taken as that answer (and is not a message for the
// conversation).
func (a *Asks) Typed(ctx context.Context, in *bus.Inbound) bool {
	w, opt := a.typedFor(in)
	if w == nil {
		return false
	}
	claimed := false
	err := a.st.Update(func(tx *store.Tx) error {
		rec, err := GetTx(tx, w.rec.ID)
		if err != nil || rec.Answered {
			return err
		}
		rec.Answered, rec.Answer, rec.AnsweredBy = true, rec.Options[opt], typedBy(in)
		claimed = true
		return PutTx(tx, rec)
	})
	if err != nil || !claimed || !a.Answer(w.rec.ID, opt) {
		return false
	}
	a.edit(ctx, w, fmt.Sprintf("✅ %s — chosen by %s", w.rec.Options[opt], typedBy(in)))
	return true
}

// typedFor finds the question in answers and the option it names.
func (a *Asks) typedFor(in *bus.Inbound) (*waiter, int) {
	if len(in.Files) > 0 || in.Press != nil {
		return nil, 0
	}
	key := in.ChatKey()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.waiting {
		if w.rec.ChatKey != key || (w.rec.UserID != "" && w.rec.UserID != in.UserID) {
			continue
		}
		if opt, ok := optionOf(in.Text, w.rec.Options); ok {
			return w, opt
		}
		return nil, 0 // only the oldest question takes typed answers
	}
	return nil, 0
}

// optionOf reads text as an option's number (1-based) or its label.
func optionOf(text string, options []string) (int, bool) {
	text = strings.TrimRight(strings.TrimSpace(text), ".!")
	if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(options) {
		return n - 1, true
	}
	for i, o := range options {
		if strings.EqualFold(text, o) {
			return i, true
		}
	}
	return 0, false
}

func typedBy(in *bus.Inbound) string {
	if in.UserName != "" {
		return in.UserName
	}
	return in.UserID
}
