package fakeslack

import (
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

func TestHelloMentionPairAcked(t *testing.T) {
	s := New(t)
	c := newClient(t, s, false)
	hello := c.waitHello()
	if hello.Request.NumConnections != 1 || hello.Request.ConnectionInfo.AppID != "A0APP" {
		t.Fatalf("hello = %+v", hello.Request)
	}
	ts := s.Mention("C1", "U1", "<@U0BOT> hi", "")

	e1, a1 := c.nextUser()
	e2, a2 := c.nextUser()
	m, ok := a1.InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !ok || m.User != "U1" || m.Text != "<@U0BOT> hi" || m.TimeStamp != ts || m.Channel != "C1" || m.ThreadTimeStamp != "" {
		t.Fatalf("app_mention = %#v", a1.InnerEvent.Data)
	}
	msg, ok := a2.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || msg.User != "U1" || msg.TimeStamp != ts || msg.ChannelType != "channel" || msg.ClientMsgID == "" {
		t.Fatalf("message = %#v", a2.InnerEvent.Data)
	}
	if eventID(t, a1) == eventID(t, a2) || e1.Request.EnvelopeID == e2.Request.EnvelopeID {
		t.Fatal("the pair must have distinct event and envelope ids")
	}
	if a1.TeamID != "T0TEAM" || e1.Request.RetryAttempt != 0 {
		t.Fatalf("envelope = %+v / %+v", a1, e1.Request)
	}
	_ = c.sm.Ack(*e1.Request)
	_ = c.sm.Ack(*e2.Request)
	s.WaitFor(func() bool { return len(s.Acks()) == 2 })
	if !s.Acked(e1.Request.EnvelopeID) || !s.Acked(e2.Request.EnvelopeID) {
		t.Fatalf("acks = %v", s.Acks())
	}

	// Threaded DM message.
	ts2 := s.Message("D1", "im", "U1", "more", ts)
	e3, a3 := c.nextUser()
	dm := a3.InnerEvent.Data.(*slackevents.MessageEvent)
	if dm.ChannelType != "im" || dm.ThreadTimeStamp != ts || dm.TimeStamp != ts2 || ts2 <= ts {
		t.Fatalf("dm = %#v", dm)
	}
	_ = c.sm.Ack(*e3.Request)

	// Slash command, an unparsable envelope, a user edit.
	envID := s.SlashCommand("C1", "U1", "/agent", "reset")
	e4 := c.next()
	cmd, ok := e4.Data.(slack.SlashCommand)
	if !ok || cmd.Command != "/agent" || cmd.Text != "reset" || e4.Request.EnvelopeID != envID {
		t.Fatalf("slash = %#v", e4.Data)
	}
	_ = c.sm.Ack(*e4.Request, map[string]any{"text": "done"})
	s.WaitFor(func() bool { return s.Acked(envID) })
	if p, _ := s.AckPayload(envID); string(p) != `{"text":"done"}` {
		t.Fatalf("ack payload = %s", p)
	}
	s.SendRaw(`{"envelope_id":"bad-1","type":"events_api","payload":{"type":"event_callback","event":{"type":"no_such_event"}}}`)
	if e := c.next(); e.Type != socketmode.EventTypeErrorBadMessage {
		t.Fatalf("got %s", e.Type)
	}
	s.Edit("C1", ts, "<@U0BOT> hello")
	_, a5 := c.nextUser()
	ed := a5.InnerEvent.Data.(*slackevents.MessageEvent)
	if ed.SubType != "message_changed" || ed.Message == nil || ed.Message.Text != "<@U0BOT> hello" || ed.Message.Timestamp != ts {
		t.Fatalf("edit = %#v", ed)
	}
}

func TestUnackedEnvelopeRedelivered(t *testing.T) {
	s := New(t)
	s.AckTimeout = 200 * time.Millisecond
	c := newClient(t, s, false)
	c.waitHello()
	s.Message("D1", "im", "U1", "hi", "")
	e1, a1 := c.nextUser() // not acked
	e2, a2 := c.nextUser()
	if e2.Request.RetryAttempt != 1 || e2.Request.RetryReason != "timeout" ||
		eventID(t, a1) != eventID(t, a2) || e1.Request.EnvelopeID == e2.Request.EnvelopeID {
		t.Fatalf("redelivery = %+v (first %+v)", e2.Request, e1.Request)
	}
	_ = c.sm.Ack(*e2.Request)
	s.WaitFor(func() bool { return s.Acked(e2.Request.EnvelopeID) })

	// Explicit Retry: same event_id, next attempt.
	env := s.Retry(eventID(t, a1))
	e3, a3 := c.nextUser()
	if e3.Request.RetryAttempt != 2 || eventID(t, a3) != eventID(t, a1) || e3.Request.EnvelopeID != env {
		t.Fatalf("retry = %+v, want envelope %s", e3.Request, env)
	}
	_ = c.sm.Ack(*e3.Request)
	s.WaitFor(func() bool { return s.Acked(env) })
}

func TestDisconnectReconnects(t *testing.T) {
	s := New(t)
	c := newClient(t, s, true)
	c.waitHello()
	s.Disconnect("refresh_requested")
	s.WaitFor(func() bool { return s.Connections() == 2 })
	c.waitHello()
	ts := s.Mention("C1", "U1", "<@U0BOT> after refresh", "")
	_, a := c.nextUser()
	if m := a.InnerEvent.Data.(*slackevents.AppMentionEvent); m.TimeStamp != ts {
		t.Fatalf("got %#v", m)
	}
	c.nextUser()
	if n := len(s.CallsTo("apps.connections.open")); n != 2 {
		t.Fatalf("apps.connections.open called %d times", n)
	}
}

func TestDropSocketReconnects(t *testing.T) {
	s := New(t)
	c := newClient(t, s, true)
	c.waitHello()
	s.DropSocket()
	// An event sent while no socket is up is delivered after the reconnect.
	ts := s.Message("C2", "channel", "U1", "queued", "")
	s.WaitFor(func() bool { return s.Connections() == 2 })
	_, a := c.nextUser()
	if m := a.InnerEvent.Data.(*slackevents.MessageEvent); m.TimeStamp != ts || m.Text != "queued" {
		t.Fatalf("got %#v", m)
	}
	s.WaitFor(func() bool { return len(s.Acks()) == 1 })
}

func TestTicketsAreSingleUse(t *testing.T) {
	s := New(t)
	api := slack.New(s.BotToken, slack.OptionAppLevelToken(s.AppToken), slack.OptionAPIURL(s.URL+"/api/"))
	sm := socketmode.New(api)
	_, url, err := sm.Open()
	if err != nil {
		t.Fatal(err)
	}
	_, url2, _ := sm.Open()
	if url == url2 {
		t.Fatal("each apps.connections.open must issue a new ticket")
	}
	// The bot token is not accepted for apps.connections.open.
	if _, _, err := socketmode.New(slack.New(s.BotToken, slack.OptionAppLevelToken(s.BotToken),
		slack.OptionAPIURL(s.URL+"/api/"))).Open(); err == nil {
		t.Fatal("bot token accepted by apps.connections.open")
	}
	dial := func(u string) error {
		c, _, err := dialWS(u)
		if c != nil {
			_ = c.Close()
		}
		return err
	}
	if err := dial(url); err != nil {
		t.Fatal(err)
	}
	if err := dial(url); err == nil {
		t.Fatal("used ticket accepted")
	}
	if err := dial(url + "x"); err == nil {
		t.Fatal("unknown ticket accepted")
	}
	s.WaitFor(func() bool { return s.Connections() == 1 })
	opens := s.CallsTo("apps.connections.open")
	if len(opens) != 3 || opens[2].Error != "not_allowed_token_type" {
		t.Fatalf("apps.connections.open calls = %+v", opens)
	}
}

func dialWS(u string) (*websocket.Conn, *http.Response, error) {
	return websocket.DefaultDialer.Dial(u, http.Header{"Origin": {"https://api.slack.com"}})
}

// The fake's WebSocket PINGs keep a client with a short ping interval connected.
func TestServerPingsKeepConnection(t *testing.T) {
	s := New(t)
	s.PingInterval = 50 * time.Millisecond
	c := newClient(t, s, true, socketmode.OptionPingInterval(300*time.Millisecond))
	c.waitHello()
	time.Sleep(time.Second) // several client ping-timeout periods
	s.Message("C1", "channel", "U1", "still here", "")
	c.nextUser()
	if n := s.Connections(); n != 1 {
		t.Fatalf("connections = %d, want 1 (client dropped the socket)", n)
	}
}
