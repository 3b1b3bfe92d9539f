package lark

import (
	"context"
	"testing"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/testutil"
)

// TestStartWaitsForReactions: a reaction Lark never answers is given up
// when the channel stops, and Start returns only after it has.
func TestStartWaitsForReactions(t *testing.T) {
	fake := fakelark.New(t)
	began, ended := fake.Stall("/reactions")
	c, err := New(Options{AppID: fake.AppID, AppSecret: fake.AppSecret, Domain: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := testutil.Publisher{Got: make(chan *bus.Inbound, 1)}
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx, pub) }()

	fake.Send(fakelark.MessageEvent{ChatID: "oc_p2p", ChatType: "p2p", SenderOpenID: "ou_user", Content: fakelark.Text("hello")})
	testutil.Wait(t, pub.Got, "the message")
	testutil.Wait(t, began, "the reaction request")
	cancel()
	if err := testutil.Wait(t, done, "Start to return"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if n := testutil.Goroutines("lark.(*Channel).react"); n > 0 {
		t.Errorf("%d reaction goroutines still running after Start returned", n)
	}
	testutil.Wait(t, ended, "the reaction request to be given up")
}
