package bus

import "context"

// Button is one button under a message. ID is what the platform sends
// back when it is pressed: an id the router looks up, never data it
// trusts (Telegram carries at most 64 bytes of it).
type Button struct {
	Text string
	ID   string
}

// Press says that a person pressed a button: it is set on an Inbound
// whose UserID, UserName, Channel and ChatID say who pressed it where.
type Press struct {
	ID        string // the Button's ID
	MessageID string // the platform id of the message the button is under
	// By shows who pressed in the edited message (a platform mention);
	// "": UserName, else UserID.
	By string `json:",omitempty"`
}

// ButtonSender is implemented by senders that show Outbound.Buttons (and
// deliver presses to a Presser). Where a question would be useless without
// its buttons (a confirmation), it is only asked there.
type ButtonSender interface {
	ShowsButtons() bool
}

// Presser takes button presses from the channels: the router. Press
// returns at once (the work a press starts runs later) with a short
// notice for the person ("" for none), for the channel's acknowledgement
// (Telegram's answerCallbackQuery, a Lark toast). An error means the press
// was not handled and should be delivered again.
type Presser interface {
	Press(ctx context.Context, in *Inbound) (notice string, err error)
}
