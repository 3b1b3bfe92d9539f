package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
)

// batchPublisher records what it accepted per chat, drops an event key it
// already holds (as the bus does), fails the keys in fail once each, and
// holds chat "-100" until chat "-200" has published: a batch handled one
// update at a time would never get there.
type batchPublisher struct {
	mu      sync.Mutex
	seen    map[string]bool
	got     map[string][]string
	fail    map[string]bool
	release chan struct{}
}

func (p *batchPublisher) Publish(ctx context.Context, in *bus.Inbound) error {
	if in.ChatID == "-100" {
		select {
		case <-p.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail[in.EventKey] {
		delete(p.fail, in.EventKey)
		return errors.New("disk full")
	}
	if !p.seen[in.EventKey] {
		p.seen[in.EventKey] = true
		p.got[in.ChatID] = append(p.got[in.ChatID], in.Text)
	}
	if in.ChatID == "-200" && len(p.got["-200"]) == 1 {
		close(p.release)
	}
	return nil
}

func (p *batchPublisher) StartsRun(string) bool { return false }

// TestPollBatchChatsConcurrentInOrder: one getUpdates batch with three
// chats' messages interleaved. Each chat's messages reach the bus in their
// order, the chats side by side (chat -100 is held until chat -200 has
// been published). An update the bus refuses is not confirmed: the next
// poll asks from it, and the updates after it come again and are dropped
// by the bus as duplicates.
func TestPollBatchChatsConcurrentInOrder(t *testing.T) {
	msg := func(id, chat int, text string) string {
		return fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"from":{"id":7,"is_bot":false,"first_name":"Ann"},`+
			`"chat":{"id":%d,"type":"group","title":"g"},"date":1700000000,"text":"@DeerBot %s","entities":[{"type":"mention","offset":0,"length":8}]}}`, id, id, chat, text)
	}
	updates := []string{
		msg(11, -100, "a1"), msg(12, -200, "b1"), msg(13, -100, "a2"),
		msg(14, -300, "c1"), msg(15, -200, "b2"), msg(16, -100, "a3"),
	}
	var offsets []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off := r.FormValue("offset")
		offsets = append(offsets, off)
		switch off {
		case "1": // the first poll
			io.WriteString(w, `{"ok":true,"result":[`+strings.Join(updates, ",")+`]}`)
		case "15": // update 15 failed: it and those after it, as Telegram does
			io.WriteString(w, `{"ok":true,"result":[`+strings.Join(updates[4:], ",")+`]}`)
		default:
			cancel()
			io.WriteString(w, `{"ok":true,"result":[]}`)
		}
	}))
	defer srv.Close()
	c := pollingChannel(t, srv.URL)
	p := &batchPublisher{seen: map[string]bool{}, got: map[string][]string{},
		fail: map[string]bool{"telegram:update:15": true}, release: make(chan struct{})}
	if err := c.poll(ctx, p); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"-100": {"a1", "a2", "a3"}, "-200": {"b1", "b2"}, "-300": {"c1"}}
	if diff := cmp.Diff(want, p.got); diff != "" {
		t.Errorf("accepted per chat (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1", "15", "17"}, offsets); diff != "" {
		t.Errorf("offsets asked for (-want +got):\n%s", diff)
	}
}

// pollingChannel is a channel for the Bot API at url that knows itself as
// @DeerBot, ready to poll.
func pollingChannel(t *testing.T, url string) *Channel {
	t.Helper()
	c, err := New(Options{Token: "123:t", APIURL: url, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c.me = &models.User{ID: 42, IsBot: true, Username: "DeerBot"}
	return c
}
