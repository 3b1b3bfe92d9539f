package router

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/outbox"
	"github.com/deerflow/deerflow/store"
)

// flakyChannel is an editChannel that refuses every send while down.
type flakyChannel struct {
	*editChannel
	mu    sync.Mutex
	down  bool
	tries int
}

func (c *flakyChannel) Send(ctx context.Context, out *bus.Outbound) ([]string, error) {
	c.mu.Lock()
	down := c.down
	c.tries++
	c.mu.Unlock()
	if down {
		return nil, errors.New("platform unavailable (503)")
	}
	return c.editChannel.Send(ctx, out)
}

func outboxLen(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	if err := st.View(func(tx *store.Tx) error {
		return tx.Outbox(func(uint64, []byte) error { n++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func (c *editChannel) joined() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.log, "\n")
}

func TestOutboxEmptyAfterNormalTraffic(t *testing.T) {
	b, st := newTestBus(t, echoModel{})
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	for _, text := range []string{"one", "/help", "two", "/status"} {
		b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: text})
		b.WaitIdle(ctx)
	}
	if got := ch.joined(); strings.Count(got, "you said:") != 2 || !strings.Contains(got, "Commands:") {
		t.Fatalf("log:\n%s", got)
	}
	if n := outboxLen(t, st); n != 0 {
		t.Fatalf("%d sends left unconfirmed after a quiet day", n)
	}
}

func TestUndeliveredAnswerIsSentAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deerflow.db")
	b, st := openBus(t, path, echoModel{})
	ch := &flakyChannel{editChannel: newEditChannel(), down: true}
	b.Register(ch)
	ctx := context.Background()
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", MessageID: "u-7", UserID: "u1", Text: "are you there"})
	b.WaitIdle(ctx)
	if got := ch.joined(); got != "" {
		t.Fatalf("a down platform showed:\n%s", got)
	}
	if n := outboxLen(t, st); n != 1 {
		t.Fatalf("outbox holds %d sends, want the answer", n)
	}
	// A replay while the platform is still down keeps it, counting the
	// attempt.
	if n := b.ReplayOutbox(ctx); n != 0 {
		t.Fatalf("replayed %d while down", n)
	}
	b.shutdown(ctx, 0, errors.New("restart"))
	st.Close()

	b, st = openBus(t, path, echoModel{})
	defer st.Close()
	up := newEditChannel()
	b.Register(up)
	if n := b.ReplayOutbox(ctx); n != 1 {
		t.Fatalf("replayed %d, want 1", n)
	}
	if got := up.joined(); !strings.Contains(got, "final=true: you said: are you there") {
		t.Fatalf("after restart:\n%s", got)
	}
	if n := outboxLen(t, st); n != 0 {
		t.Fatalf("outbox still holds %d", n)
	}
	if n := b.ReplayOutbox(ctx); n != 0 || strings.Count(up.joined(), "you said") != 1 {
		t.Fatalf("replayed again (%d):\n%s", n, up.joined())
	}
	// The message the answer replied to still maps to the conversation,
	// and so does the answer.
	key, err := st.BotMessageChat("plat", "c1", "m1")
	if err != nil || key != "plat:c1" {
		t.Fatalf("answer id not mapped: %q %v", key, err)
	}
}

func TestAnswerEditReplayedAsEditThenAsMessage(t *testing.T) {
	m := &stepModel{step: make(chan string)}
	b, st := newTestBus(t, m)
	ch := &flakyChannel{editChannel: newEditChannel()}
	b.Register(ch)
	ctx := context.Background()
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: "go"})
	m.step <- "thinking"
	ch.waitText(t, "m1", "thinking")
	m.step <- " hard" // an edit: the progress message's id is known
	ch.waitText(t, "m1", "thinking hard")
	ch.mu.Lock()
	ch.down = true
	ch.mu.Unlock()
	close(m.step)
	b.WaitIdle(ctx)
	if n := outboxLen(t, st); n != 1 {
		t.Fatalf("outbox holds %d, want the answer's edit", n)
	}
	var rec outbox.Record
	st.View(func(tx *store.Tx) error {
		return tx.Outbox(func(_ uint64, data []byte) error { return json.Unmarshal(data, &rec) })
	})
	if rec.Kind != bus.OutEdit || rec.EditID != "m1" {
		t.Fatalf("answer recorded as %+v, want an edit of the progress message m1", rec)
	}
	ch.mu.Lock()
	ch.down = false
	ch.mu.Unlock()
	if n := b.ReplayOutbox(ctx); n != 1 {
		t.Fatalf("replayed %d", n)
	}
	if got := ch.joined(); !strings.Contains(got, "edit m1 final=true: thinking hard") {
		t.Fatalf("log:\n%s", got)
	}

	// When the message to edit is gone, the replay sends it afresh.
	ch.failEdits = true
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c2", UserID: "u1", Text: "/help"})
	st.Batch(func(tx *store.Tx) error {
		data, _ := json.Marshal(&outbox.Record{ChatKey: "plat:c2", Kind: bus.OutEdit, Channel: "plat", ChatID: "c2", EditID: "gone", Text: "late answer", Created: time.Now()})
		_, err := tx.PutOutbox(data)
		return err
	})
	if n := b.ReplayOutbox(ctx); n != 1 {
		t.Fatalf("replayed %d", n)
	}
	if got := ch.joined(); !strings.Contains(got, "final=true: late answer") {
		t.Fatalf("log:\n%s", got)
	}
}

func TestInterruptedRunIsToldAndRetried(t *testing.T) {
	b, st := newTestBus(t, echoModel{})
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: "/retry"})
	b.WaitIdle(ctx)
	if got := ch.joined(); !strings.Contains(got, "no message of yours") {
		t.Fatalf("retry with nothing to retry:\n%s", got)
	}
	// A run that was going when the process died: its user message is
	// stored, its answer is not.
	threadID, err := b.threadFor("plat:c1")
	if err != nil {
		t.Fatal(err)
	}
	run := &store.Run{ID: "run_x", ThreadID: threadID, ChatKey: "plat:c1", Status: store.RunInterrupted, MessageID: "u-9"}
	task := &store.Task{RunID: "run_x", ID: "t1", ChatKey: "plat:c1", Description: "read the logs", Progress: "m77", ReplyTo: "u-9"}
	err = st.Update(func(tx *store.Tx) error {
		if err := tx.AppendMessages(threadID, &store.Message{Role: "user", Content: "summarize the logs", RunID: "run_x"},
			&store.Message{Role: "user", Content: "hidden nudge", Hidden: true}); err != nil {
			return err
		}
		return b.RecordInterrupted(tx, []*store.Run{run}, []*store.Task{task})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := b.ReplayOutbox(ctx); n != 2 {
		t.Fatalf("replayed %d, want the task's edit and the notice", n)
	}
	got := ch.joined()
	if !strings.Contains(got, `edit m77 final=true: ⚠️ read the logs`) ||
		!strings.Contains(got, `I was restarted before I could finish this reply (the subagent task "read the logs" stopped too); send /retry to run your message again.`) {
		t.Fatalf("notices:\n%s", got)
	}
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: "/retry"})
	b.WaitIdle(ctx)
	if got := ch.joined(); !strings.Contains(got, "you said: summarize the logs") {
		t.Fatalf("after /retry:\n%s", got)
	}
}

func TestRecoveredMessagesAndRepliesDuringShutdownGrace(t *testing.T) {
	m := &stepModel{step: make(chan string)}
	b, _ := newTestBus(t, m)
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: "long job"})
	m.step <- "halfway"
	ch.waitText(t, "m1", "halfway")
	done := make(chan struct{})
	go func() {
		b.shutdown(ctx, time.Hour, errors.New("shutting down"))
		close(done)
	}()
	// Intake is closed at once...
	for {
		if b.opts.Runner.Closed() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c2", UserID: "u2", Text: "new"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("publish while closing: %v", err)
	}
	// ...but the running reply finishes within the grace period.
	m.step <- " and done"
	close(m.step)
	<-done
	if got := ch.joined(); !strings.Contains(got, "edit m1 final=true: halfway and done") {
		t.Fatalf("log:\n%s", got)
	}
}

func TestEventIDsExpire(t *testing.T) {
	b, st := newTestBus(t, echoModel{})
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	now := time.Now()
	b.opts.Now = func() time.Time { return now }
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", EventKey: "plat:1", Text: "/help"})
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", EventKey: "plat:1", Text: "/help"})
	b.pruneSeen()
	st.View(func(tx *store.Tx) error {
		if seen, _ := tx.Seen("plat:1"); !seen {
			t.Error("a fresh event id was forgotten")
		}
		return nil
	})
	// Three days later the id is forgotten, once an hour at most.
	now = now.Add(seenFor + time.Minute)
	b.pruneSeen()
	st.View(func(tx *store.Tx) error {
		if seen, _ := tx.Seen("plat:1"); seen {
			t.Error("an event id older than seenFor is still kept")
		}
		return nil
	})
	if got := strings.Count(ch.joined(), "Commands:"); got != 1 {
		t.Fatalf("help shown %d times", got)
	}
}

// fileChannel is an editChannel whose attachments can be fetched again by
// reference.
type fileChannel struct {
	*editChannel
	files map[string]string // ref → content
}

func (c *fileChannel) Reattach(ref string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		data, ok := c.files[ref]
		if !ok {
			return nil, errors.New("no such file")
		}
		return io.NopCloser(strings.NewReader(data)), nil
	}
}

func TestFilesOfAStoredMessageAreFetchedAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deerflow.db")
	saved := map[string]string{}
	var mu sync.Mutex
	save := func(b *Router) {
		b.opts.SaveUpload = func(ctx context.Context, threadID string, a bus.Attachment) (Upload, error) {
			r, err := a.Open()
			if err != nil {
				return Upload{}, err
			}
			defer r.Close()
			data, _ := io.ReadAll(r)
			mu.Lock()
			saved[a.Name] = string(data)
			mu.Unlock()
			return Upload{Line: "/mnt/user-data/uploads/" + a.Name}, nil
		}
	}
	m := &stepModel{step: make(chan string)}
	b, st := openBus(t, path, m)
	save(b)
	b.Register(newEditChannel())
	ctx := context.Background()
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: "busy"})
	m.step <- "working"
	// The file message waits behind the running reply: it is stored with
	// its file's reference, nothing is downloaded yet.
	opened := false
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: "read this",
		Files: []bus.Attachment{{Name: "notes.txt", Size: 5, Ref: "file-1", Open: func() (io.ReadCloser, error) {
			opened = true
			return nil, errors.New("not now")
		}}}})
	b.shutdown(ctx, 0, errors.New("restart"))
	st.Close()
	if opened {
		t.Fatal("the file was fetched before the message's turn")
	}

	b, st = openBus(t, path, echoModel{})
	defer st.Close()
	save(b)
	ch := &fileChannel{editChannel: newEditChannel(), files: map[string]string{"file-1": "hello"}}
	b.Register(ch)
	if n, err := b.recoverAll(ctx); n != 1 || err != nil {
		t.Fatalf("recovered %d, %v", n, err)
	}
	b.WaitIdle(ctx)
	mu.Lock()
	got := saved["notes.txt"]
	mu.Unlock()
	if got != "hello" {
		t.Fatalf("saved %q after the restart", got)
	}
	if log := ch.joined(); !strings.Contains(log, "/mnt/user-data/uploads/notes.txt") || !strings.Contains(log, "read this") {
		t.Fatalf("the model did not get the file:\n%s", log)
	}
}
