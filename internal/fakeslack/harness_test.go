package fakeslack

import (
	"context"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// client is the real slack-go client connected to a fake.
type client struct {
	t       *testing.T
	api     *slack.Client
	sm      *socketmode.Client
	events  chan socketmode.Event // events_api, slash_commands, interactive, error_bad_message
	hellos  chan socketmode.Event
	autoAck bool
}

// newClient connects api + socketmode to s. With autoAck every request is acked.
func newClient(t *testing.T, s *Server, autoAck bool, opts ...socketmode.Option) *client {
	t.Helper()
	api := slack.New(s.BotToken, slack.OptionAppLevelToken(s.AppToken), slack.OptionAPIURL(s.URL+"/api/"))
	sm := socketmode.New(api, opts...)
	c := &client{t: t, api: api, sm: sm, events: make(chan socketmode.Event, 100),
		hellos: make(chan socketmode.Event, 10), autoAck: autoAck}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_ = sm.RunContext(ctx)
	}()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-sm.Events:
				switch evt.Type {
				case socketmode.EventTypeHello:
					c.hellos <- evt
				case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand,
					socketmode.EventTypeInteractive, socketmode.EventTypeErrorBadMessage:
					if c.autoAck && evt.Request != nil {
						_ = sm.Ack(*evt.Request)
					}
					c.events <- evt
				}
			}
		}
	}()
	return c
}

func (c *client) waitHello() socketmode.Event {
	c.t.Helper()
	select {
	case e := <-c.hellos:
		return e
	case <-time.After(10 * time.Second):
		c.t.Fatal("no hello")
	}
	return socketmode.Event{}
}

func (c *client) next() socketmode.Event {
	c.t.Helper()
	select {
	case e := <-c.events:
		return e
	case <-time.After(10 * time.Second):
		c.t.Fatal("no event")
	}
	return socketmode.Event{}
}

// nextUser returns the next events_api event that is not an echo of the bot's own message.
func (c *client) nextUser() (socketmode.Event, slackevents.EventsAPIEvent) {
	c.t.Helper()
	for {
		e := c.next()
		api, ok := e.Data.(slackevents.EventsAPIEvent)
		if !ok {
			c.t.Fatalf("unexpected event %s: %#v", e.Type, e.Data)
		}
		if m, ok := api.InnerEvent.Data.(*slackevents.MessageEvent); ok && m.BotID != "" {
			continue
		}
		return e, api
	}
}

func eventID(t *testing.T, api slackevents.EventsAPIEvent) string {
	t.Helper()
	cb, ok := api.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok {
		t.Fatalf("Data is %T", api.Data)
	}
	return cb.EventID
}
