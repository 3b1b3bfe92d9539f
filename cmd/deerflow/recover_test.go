package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// TestKill9RecoversEveryOrigin kills the built binary with SIGKILL while a
// Telegram chat and an API thread each have a run in the middle of its
// model call and another waiting behind it, then restarts it. One recovery
// pass handles both front ends alike: each cut-short run is reported the
// way its front end reports (the chat is told to /retry; the API run reads
// interrupted) and each waiting run resumes under its id and is answered.
func TestKill9RecoversEveryOrigin(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	var restarted atomic.Bool
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		turn := fakeopenai.Turn{Text: "answer to: " + r.Last().Content}
		if strings.HasPrefix(r.Last().Content, "hold") && !restarted.Load() {
			turn.Hold = hold
		}
		return turn
	})
	dir, addr := t.TempDir(), freeAddr(t)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
http:
  listen: %s
  api_token: ${DEERFLOW_API_TOKEN}
models:
  - {name: default, model: fake-model, base_url: %s, api_key: test}
channels:
  telegram: {enabled: true, bot_token: %s, api_url: %s}
memory:
  enabled: false
`, addr, model.URL, tg.Token, tg.URL))
	env := "DEERFLOW_API_TOKEN=" + apiToken
	cmd := startBinaryServe(t, dir, cfg, env)
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	c := apiClient{t: t, base: "http://" + addr}

	alice := faketelegram.User{ID: 7001, FirstName: "Alice", Username: "alice"}
	tg.PushMessage(faketelegram.Private(alice, "hold chat"))
	model.WaitRequests(1)
	tg.PushMessage(faketelegram.Private(alice, "after chat"))
	waitMessage(t, tg, alice.ID, "Queued")

	thread := c.thread()
	heldRun := c.run(thread, "hold api")
	model.WaitRequests(2)
	queuedRun := c.run(thread, "after api")
	var st apiRun
	c.call("GET", "/api/threads/"+thread+"/runs/"+queuedRun, nil, http.StatusOK, &st)
	if st.Status != "pending" {
		t.Fatalf("the API run behind the held one = %+v", st)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	restarted.Store(true)
	startBinaryServe(t, dir, cfg, env)
	waitHealth(t, addr, "200 after the restart", func(code int, _ health) bool { return code == 200 })

	// The chat: told about the run the kill cut short, answered for the
	// one that waited.
	waitMessage(t, tg, alice.ID, "send /retry")
	waitMessage(t, tg, alice.ID, "answer to: after chat")
	// The API: the cut-short run reads interrupted; the waiting one ran
	// under its id.
	c.call("GET", "/api/threads/"+thread+"/runs/"+heldRun, nil, http.StatusOK, &st)
	if st.Status != "interrupted" {
		t.Errorf("the API run cut short = %+v", st)
	}
	evs := c.stream(thread, queuedRun).rest()
	ended(t, evs, "success")
	if got := answerOf(t, evs); got != "answer to: after api" {
		t.Errorf("the resumed API run answered %q", got)
	}
	perMessage := map[string]int{}
	for _, r := range model.Requests() {
		perMessage[r.Last().Content]++
	}
	for msg, want := range map[string]int{"hold chat": 1, "hold api": 1, "after chat": 1, "after api": 1} {
		if perMessage[msg] != want {
			t.Errorf("%q reached the model %d times, want %d (all: %v)", msg, perMessage[msg], want, perMessage)
		}
	}
}
