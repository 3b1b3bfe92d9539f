package router

import (
	"context"
	"errors"
	"fmt"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/choice"
	"github.com/deerflow/deerflow/store"
)

// Notices a press is answered with when it changes nothing.
const (
	pressGoneText     = "This button is no longer active."
	pressNotYoursText = "Only the person who asked can answer this."
	pressFailedText   = "I couldn't take that; please try again."
	pressPastText     = "This question was already answered in the conversation."
)

// errAskGone: nothing waits on the question any more (it ended, or the
// service restarted since).
var errAskGone = errors.New("the question is no longer waited on")

// The /new confirmation's options.
const (
	newConfirm = "Start a new conversation"
	newKeep    = "Keep this one"
)

// Press handles a button press (bus.Presser): the id names a stored
// choice, which is answered once, by the person it was asked of (in a
// group) — a clarification's option then goes to the conversation as
// their message. The question's message is edited in the background to
// show the answer without buttons, so the press is acknowledged at once.
// The channel has checked the allow-list.
func (r *Router) Press(ctx context.Context, in *bus.Inbound) (string, error) {
	if in.Press == nil {
		return "", nil
	}
	recID, opt, ok := choice.ParseID(in.Press.ID)
	if !ok {
		return pressGoneText, nil
	}
	rec, notice, err := r.claim(recID, opt, in)
	if rec == nil {
		return notice, err
	}
	if err := r.act(ctx, rec, opt, in); errors.Is(err, errAskGone) {
		return pressGoneText, nil
	} else if err != nil {
		r.log.Error("acting on a button press", "choice", recID, "err", err)
		r.unclaim(rec) // the press comes again, or the person presses again
		return pressFailedText, err
	}
	r.showAnswer(rec, in)
	return "", nil
}

// claim marks the choice recID answered by in's option opt, once: nil
// and a notice when the press cannot count.
func (r *Router) claim(recID string, opt int, in *bus.Inbound) (*choice.Record, string, error) {
	r.pressMu.Lock()
	defer r.pressMu.Unlock()
	var rec *choice.Record
	var notice string
	err := r.opts.Store.Update(func(tx *store.Tx) error {
		var err error
		if rec, err = choice.GetTx(tx, recID); err != nil {
			return err
		}
		var ok bool
		if notice, ok = r.mayAnswer(rec, opt, in); !ok {
			rec = nil
			return nil
		}
		if rec.Kind == choice.Clarify && !choice.OpenTx(tx, rec.ChatKey, rec.ID) {
			// Answered in words, or the conversation has moved on.
			rec, notice = nil, pressPastText
			return nil
		}
		rec.Answered, rec.Answer, rec.AnsweredBy = true, rec.Options[opt], who(in)
		return choice.PutTx(tx, rec)
	})
	switch {
	case errors.Is(err, choice.ErrNotFound):
		return nil, pressGoneText, nil
	case err != nil:
		r.log.Error("answering a button's choice", "choice", recID, "err", err)
		return nil, pressFailedText, err
	}
	return rec, notice, nil
}

// unclaim opens a choice again after its press failed.
func (r *Router) unclaim(rec *choice.Record) {
	r.pressMu.Lock()
	defer r.pressMu.Unlock()
	rec.Answered, rec.Answer, rec.AnsweredBy = false, "", ""
	if err := r.opts.Store.Update(func(tx *store.Tx) error { return choice.PutTx(tx, rec) }); err != nil {
		r.log.Error("reopening a button's choice", "choice", rec.ID, "err", err)
	}
}

// mayAnswer checks that the press is for an open choice of this chat,
// from the person it was asked of; otherwise it returns the notice.
func (r *Router) mayAnswer(rec *choice.Record, opt int, in *bus.Inbound) (string, bool) {
	ch, chat, _ := bus.SplitChatKey(rec.ChatKey)
	switch {
	case ch != in.Channel || chat != in.ChatID || opt >= len(rec.Options):
		return pressGoneText, false
	case rec.Answered:
		return fmt.Sprintf("Already answered: %s.", rec.Answer), false
	case rec.Group && rec.UserID != "" && rec.UserID != in.UserID:
		return pressNotYoursText, false
	}
	return "", true
}

// act does what option opt means: a clarification's reply goes to the
// conversation as the person's message (stored before act returns; a
// command's reply runs after the press is acknowledged), a model is
// switched, a new conversation started.
func (r *Router) act(ctx context.Context, rec *choice.Record, opt int, in *bus.Inbound) error {
	_, _, topic := bus.SplitChatKey(rec.ChatKey)
	msg := &bus.Inbound{
		Channel: in.Channel, ChatID: in.ChatID, Topic: topic, UserID: in.UserID, UserName: in.UserName,
		MessageID: in.Press.MessageID, Group: rec.Group, Time: r.opts.Now(), Press: in.Press,
		// One answer per choice, even when a press comes again.
		EventKey: "choice:" + rec.ID,
	}
	switch rec.Kind {
	case choice.Clarify:
		msg.Text = rec.Reply(opt)
		if _, _, ok := parseCommand(msg.Text); ok {
			r.background(func(ctx context.Context) { r.Publish(ctx, msg) })
			return nil
		}
		return r.Publish(ctx, msg)
	case choice.Model:
		r.background(func(ctx context.Context) { r.cmdModels(ctx, msg, rec.Options[opt]) })
	case choice.Agent:
		r.background(func(ctx context.Context) { r.cmdAgent(ctx, msg, rec.Options[opt]) })
	case choice.Ask:
		if r.opts.Asks == nil || !r.opts.Asks.Answer(rec.ID, opt) {
			return errAskGone
		}
	case choice.New:
		if rec.Options[opt] == newConfirm {
			r.background(func(ctx context.Context) { r.cmdNew(ctx, msg) })
		}
	}
	return nil
}

// who names the person who pressed, for the edited question.
func who(in *bus.Inbound) string {
	if in.Press.By != "" {
		return in.Press.By
	}
	if in.UserName != "" {
		return in.UserName
	}
	return in.UserID
}

// showAnswer edits the question's message to say what was chosen and by
// whom, without its buttons. It runs in the background (the press is
// acknowledged meanwhile), under the router's context.
func (r *Router) showAnswer(rec *choice.Record, in *bus.Inbound) {
	if in.Press.MessageID == "" {
		return
	}
	_, _, topic := bus.SplitChatKey(rec.ChatKey)
	out := &bus.Outbound{
		Kind: bus.OutEdit, Channel: in.Channel, ChatID: in.ChatID, Topic: topic, EditID: in.Press.MessageID,
		Text: fmt.Sprintf("%s\n\n✅ %s — chosen by %s", rec.Text, rec.Answer, rec.AnsweredBy), Final: true,
	}
	r.background(func(ctx context.Context) {
		if _, err := r.out.Send(ctx, rec.ChatKey, out); err != nil {
			r.log.Warn("editing an answered question", "chat", rec.ChatKey, "err", err)
		}
	})
}

// background runs f under the router's context; Close waits for it.
func (r *Router) background(f func(ctx context.Context)) {
	r.loops.Add(1)
	go func() {
		defer r.loops.Done()
		f(r.ctx)
	}()
}

// Post sends out into the conversation chatKey (choice.Poster).
func (r *Router) Post(ctx context.Context, chatKey string, out *bus.Outbound) (string, error) {
	return r.out.Send(ctx, chatKey, out)
}

// ShowsButtons reports whether channel shows buttons.
func (r *Router) ShowsButtons(channel string) bool {
	s, ok := r.out.Sender(channel)
	if !ok {
		return false
	}
	b, ok := s.(bus.ButtonSender)
	return ok && b.ShowsButtons()
}

// replyChoice sends text into in's conversation with rec's options as
// buttons, rec being stored first (with who asked).
func (r *Router) replyChoice(ctx context.Context, in *bus.Inbound, text string, rec *choice.Record) error {
	if !r.ShowsButtons(in.Channel) {
		return r.reply(ctx, in, text)
	}
	rec.ID, rec.ChatKey, rec.UserID, rec.Group, rec.Created = choice.NewID(), in.ChatKey(), in.UserID, in.Group, r.opts.Now()
	if rec.Text == "" {
		rec.Text = text
	}
	if err := r.opts.Store.Update(func(tx *store.Tx) error { return choice.PutTx(tx, rec) }); err != nil {
		r.log.Error("storing a choice", "chat", rec.ChatKey, "err", err)
		return r.reply(ctx, in, text) // typed answers still work
	}
	_, err := r.out.Send(ctx, in.ChatKey(), &bus.Outbound{
		Kind: bus.OutMessage, Channel: in.Channel, ChatID: in.ChatID, Topic: in.Topic,
		ReplyTo: in.MessageID, Text: text, Final: true, Buttons: rec.Buttons(),
	})
	return err
}
