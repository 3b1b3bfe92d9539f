package fakelark_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	lark "github.com/larksuite/oapi-sdk-go/v3"
	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	"github.com/larksuite/oapi-sdk-go/v3/event/dispatcher"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"
	larkws "github.com/larksuite/oapi-sdk-go/v3/ws"

	"github.com/deerflow/deerflow/internal/fakelark"
)

func restClient(f *fakelark.Server) *lark.Client {
	return lark.NewClient(f.AppID, f.AppSecret, lark.WithOpenBaseUrl(f.URL), lark.WithLogLevel(larkcore.LogLevelError))
}

// received collects the events a real SDK ws client handled.
type received struct {
	mu     sync.Mutex
	events []*larkim.P2MessageReceiveV1
}

func (r *received) list() []*larkim.P2MessageReceiveV1 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*larkim.P2MessageReceiveV1(nil), r.events...)
}

// startWS runs a real larkws client against f; fail decides per event whether
// the handler returns an error.
func startWS(t *testing.T, f *fakelark.Server, fail func(*larkim.P2MessageReceiveV1) bool) *received {
	t.Helper()
	rec := &received{}
	d := dispatcher.NewEventDispatcher("", "").OnP2MessageReceiveV1(func(_ context.Context, e *larkim.P2MessageReceiveV1) error {
		rec.mu.Lock()
		rec.events = append(rec.events, e)
		rec.mu.Unlock()
		if fail != nil && fail(e) {
			return errors.New("handler failed")
		}
		return nil
	})
	wsc := larkws.NewClient(f.AppID, f.AppSecret, larkws.WithEventHandler(d), larkws.WithDomain(f.URL),
		larkws.WithLogLevel(larkcore.LogLevelError))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- wsc.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !f.WaitFor(f.Connected) {
		t.Fatal("ws client did not connect")
	}
	return rec
}

func TestEventDeliveredAndAcked(t *testing.T) {
	f := fakelark.New(t)
	id := f.Send(fakelark.MessageEvent{ChatID: "oc_g1", ChatType: "group", SenderOpenID: "ou_alice", MessageID: "om_1",
		Content: fakelark.Text("@_user_1 hello"), Mentions: []fakelark.Mention{{Key: "@_user_1", OpenID: f.BotOpenID, Name: "bot"}}})
	rec := startWS(t, f, nil) // the event was queued until the client connected
	if !f.WaitFor(func() bool { a := f.EventAcks(id); return len(a) == 1 && a[0] == 200 }) {
		t.Fatalf("acks %v", f.EventAcks(id))
	}
	evs := rec.list()
	if len(evs) != 1 {
		t.Fatalf("got %d events", len(evs))
	}
	e := evs[0]
	m := e.Event.Message
	if e.EventV2Base.Header.EventID != id || *m.MessageId != "om_1" || *m.ChatId != "oc_g1" || *m.ChatType != "group" ||
		*m.MessageType != "text" || *m.Content != `{"text":"@_user_1 hello"}` || *e.Event.Sender.SenderId.OpenId != "ou_alice" ||
		len(m.Mentions) != 1 || *m.Mentions[0].Key != "@_user_1" || *m.Mentions[0].Id.OpenId != "ou_bot" {
		t.Fatalf("event decoded wrong: %s", larkcore.Prettify(e))
	}
	if f.Connections() != 1 || len(f.Acks()) != 1 {
		t.Fatalf("connections %d acks %v", f.Connections(), f.Acks())
	}
}

func TestFailedHandlerGets500AndRedelivery(t *testing.T) {
	f := fakelark.New(t)
	f.AckTimeout = 100 * time.Millisecond
	var mu sync.Mutex
	calls := 0
	rec := startWS(t, f, func(*larkim.P2MessageReceiveV1) bool {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return calls == 1 // only the first attempt fails
	})
	id := f.Send(fakelark.MessageEvent{ChatID: "oc_p", ChatType: "p2p", SenderOpenID: "ou_bob", Content: fakelark.Text("hi")})
	if !f.WaitFor(func() bool { a := f.EventAcks(id); return len(a) == 2 && a[0] == 500 && a[1] == 200 }) {
		t.Fatalf("acks %v", f.EventAcks(id))
	}
	evs := rec.list()
	if len(evs) != 2 || evs[0].EventV2Base.Header.EventID != evs[1].EventV2Base.Header.EventID {
		t.Fatalf("want the same event twice, got %d", len(evs))
	}
	f.Redeliver(id)
	if !f.WaitFor(func() bool { return len(rec.list()) == 3 && len(f.EventAcks(id)) == 3 && f.EventAcks(id)[2] == 200 }) {
		t.Fatalf("redeliver: %d events, acks %v", len(rec.list()), f.EventAcks(id))
	}
	if mid := f.EventMessageID(id); *rec.list()[2].Event.Message.MessageId != mid {
		t.Fatalf("message id %q", mid)
	}
}

func TestDropConnectionReconnects(t *testing.T) {
	f := fakelark.New(t)
	rec := startWS(t, f, nil)
	f.Send(fakelark.MessageEvent{ChatID: "oc_g", SenderOpenID: "ou_a", Content: fakelark.Text("one")})
	if !f.WaitFor(func() bool { return len(rec.list()) == 1 }) {
		t.Fatal("first event not received")
	}
	f.DropConnection()
	id := f.Send(fakelark.MessageEvent{ChatID: "oc_g", SenderOpenID: "ou_a", Content: fakelark.Text("two")})
	if !f.WaitFor(func() bool { return f.Connections() == 2 && len(rec.list()) == 2 }) {
		t.Fatalf("connections %d, events %d", f.Connections(), len(rec.list()))
	}
	if !f.WaitFor(func() bool { a := f.EventAcks(id); return len(a) > 0 && a[len(a)-1] == 200 }) {
		t.Fatalf("acks %v", f.EventAcks(id))
	}
	if got := *rec.list()[1].Event.Message.Content; got != `{"text":"two"}` {
		t.Fatalf("content %s", got)
	}
}

func TestEndpointRejectsWrongSecret(t *testing.T) {
	f := fakelark.New(t)
	wsc := larkws.NewClient(f.AppID, "wrong", larkws.WithEventHandler(dispatcher.NewEventDispatcher("", "")),
		larkws.WithDomain(f.URL), larkws.WithLogLevel(larkcore.LogLevelError))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ce *larkws.ClientError
	if err := wsc.Start(ctx); !errors.As(err, &ce) {
		t.Fatalf("want a fatal ClientError, got %v", err)
	}
}
