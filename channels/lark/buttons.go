package lark

import (
	"context"

	"github.com/larksuite/oapi-sdk-go/v3/event/dispatcher/callback"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/metrics"
)

// ShowsButtons implements bus.ButtonSender.
func (c *Channel) ShowsButtons() bool { return true }

// cardButtons are buttons as card (JSON 2.0) button elements, whose
// callback value carries the button's id, which the router looks up.
func cardButtons(rows [][]bus.Button) []any {
	var els []any
	for _, row := range rows {
		for _, b := range row {
			if b.Text == "" {
				continue
			}
			els = append(els, map[string]any{
				"tag": "button", "type": "default", "width": "fill",
				"text":      map[string]any{"tag": "plain_text", "content": b.Text},
				"behaviors": []any{map[string]any{"type": "callback", "value": map[string]any{"id": b.ID}}},
			})
		}
	}
	return els
}

// press handles a card.action.trigger callback: a button pressed by
// someone the allow-list admits is handed to the router, which answers at
// once (the work a press starts runs later), well within Lark's 3 s. Its
// notice, if any, shows as a toast. An error makes Lark deliver the press
// again.
func (c *Channel) press(ctx context.Context, b bus.Publisher, e *callback.CardActionTriggerEvent) (*callback.CardActionTriggerResponse, error) {
	p, ok := b.(bus.Presser)
	if !ok || e == nil || e.Event == nil || e.Event.Operator == nil || e.Event.Action == nil || e.Event.Context == nil {
		return &callback.CardActionTriggerResponse{}, nil
	}
	op := e.Event.Operator
	var userID string
	if op.UserID != nil {
		userID = *op.UserID
	}
	if !c.allowed(op.OpenID, userID) {
		c.log.Info("ignored a button press from a user not in allowed_users", "open_id", op.OpenID)
		return &callback.CardActionTriggerResponse{}, nil
	}
	id, _ := e.Event.Action.Value["id"].(string)
	chat := e.Event.Context.OpenChatID
	in := &bus.Inbound{
		Channel: c.o.Name, ChatID: chat, UserID: op.OpenID,
		// A mention in the card shows the person's name.
		Press: &bus.Press{ID: id, MessageID: e.Event.Context.OpenMessageID, By: "<at id=" + op.OpenID + "></at>"},
	}
	if e.EventV2Base != nil && e.EventV2Base.Header != nil {
		in.EventKey = c.o.Name + ":press:" + e.EventV2Base.Header.EventID
	}
	notice, err := p.Press(ctx, in)
	if err != nil {
		c.met.Error(metrics.ErrStore)
		return nil, err
	}
	resp := &callback.CardActionTriggerResponse{}
	if notice != "" {
		resp.Toast = &callback.Toast{Type: "info", Content: notice}
	}
	return resp, nil
}
