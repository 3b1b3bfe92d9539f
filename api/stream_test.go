package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// longAnswer comes in many message_delta events (Chunk 3).
var longAnswer = strings.Repeat("abcdefghij", 12)

func TestAPIStreamResumeWithLastEventID(t *testing.T) {
	h := newHarness(t, config{})
	hold := make(chan struct{})
	h.fake.Script(fakeopenai.Turn{Text: longAnswer, Chunk: 3, Hold: hold, HoldAfter: 10})
	id := h.createThread()
	run := h.startRun(id, "long")

	var all []sseEvent
	// Read a few, drop the connection.
	s := h.openStream(id, run.RunID, "")
	for len(of(all, "messages")) < 3 {
		ev, ok := s.next()
		if !ok {
			t.Fatal("the stream ended early")
		}
		all = append(all, ev)
	}
	if s.retry <= 0 {
		t.Errorf("retry = %d", s.retry)
	}
	s.close()

	// Resume from the last id (while the model is held), read a few
	// more, drop again.
	last := all[len(all)-1].ID
	s = h.openStream(id, run.RunID, strconv.Itoa(last))
	for range 3 {
		ev, ok := s.next()
		if !ok {
			t.Fatal("the resumed stream ended early")
		}
		all = append(all, ev)
	}
	s.close()

	close(hold)
	// Resume again through the query parameter, to the end.
	last = all[len(all)-1].ID
	r := h.request("GET", "/api/threads/"+id+"/runs/"+run.RunID+"/stream?"+allModes+"&last_event_id="+strconv.Itoa(last), nil)
	if r.status != http.StatusOK {
		t.Fatalf("stream with last_event_id: %s", r)
	}
	tail := parseAll(t, string(r.body), last)
	all = append(all, tail...)

	checkIDs(t, all, 1) // no gap, no repeat
	if h.endStatus(all) != "success" || len(customs(t, all, "stream_replay_gap")) != 0 {
		t.Errorf("events:\n%s", dump(all))
	}
	if deltas, final := streamed(t, all); deltas != longAnswer || final != longAnswer {
		t.Errorf("deltas %q, message %q", deltas, final)
	}

	// Resuming after the last event of a finished run gives nothing more.
	s = h.openStream(id, run.RunID, strconv.Itoa(all[len(all)-1].ID))
	if evs := s.rest(); len(evs) != 0 {
		t.Errorf("after the end:\n%s", dump(evs))
	}
	for _, bad := range []string{"x", "-1", "1.5"} {
		if s, r := h.tryStream(id, run.RunID, bad); s != nil {
			t.Errorf("Last-Event-ID %q accepted", bad)
		} else {
			wantError(t, r, http.StatusUnprocessableEntity, "bad_last_event_id")
		}
	}
}

// parseAll parses a whole event stream read at once.
func parseAll(t *testing.T, body string, lastID int) []sseEvent {
	t.Helper()
	var evs []sseEvent
	for _, block := range strings.Split(body, "\n\n") {
		ev := sseEvent{ID: lastID}
		seen := false
		for _, line := range strings.Split(block, "\n") {
			field, value, _ := strings.Cut(line, ": ")
			switch field {
			case "id":
				n, err := strconv.Atoi(value)
				if err != nil {
					t.Fatalf("id line %q", line)
				}
				ev.ID, ev.HasID, seen = n, true, true
				lastID = n
			case "event":
				ev.Kind, seen = value, true
			case "data":
				ev.Data, seen = value, true
			}
		}
		if seen {
			evs = append(evs, ev)
		}
	}
	return evs
}

// TestAPIStreamGap: with a small buffer, a client reconnecting after the
// run went on without it is told which events are gone, then gets those
// kept.
func TestAPIStreamGap(t *testing.T) {
	h := newHarness(t, config{buffer: 4})
	hold := make(chan struct{})
	h.fake.Script(fakeopenai.Turn{Text: longAnswer, Chunk: 3, Hold: hold})
	id := h.createThread()
	run := h.startRun(id, "long")
	s := h.openStream(id, run.RunID, "")
	first := s.until("values")
	checkIDs(t, first, 1)
	s.close()
	close(hold)
	h.waitStatus(id, run.RunID, "success")

	for _, from := range []string{"2", ""} {
		s = h.openStream(id, run.RunID, from)
		evs := s.rest()
		if len(evs) < 2 || len(customs(t, evs[:1], "stream_replay_gap")) != 1 || evs[0].HasID {
			t.Fatalf("after %q:\n%s", from, dump(evs))
		}
		var gap struct{ From, To int }
		evs[0].decode(t, &gap)
		kept := evs[1:]
		firstID := 0
		for _, e := range kept {
			if e.HasID {
				firstID = e.ID
				break
			}
		}
		checkIDs(t, kept, firstID)
		wantFrom := 1
		if from != "" {
			wantFrom = 3
		}
		if gap.From != wantFrom || gap.To != firstID-1 {
			t.Errorf("gap %+v, then ids from %d", gap, firstID)
		}
		if h.endStatus(kept) != "success" || len(answers(t, kept)) != 1 {
			t.Errorf("kept:\n%s", dump(kept))
		}
		// 2 + the deltas + the answer + end
		if last := kept[len(kept)-1].ID; last != 2+len(longAnswer)/3+2 {
			t.Errorf("last id %d", last)
		}
	}
}

func TestAPIStreamHeartbeat(t *testing.T) {
	h := newHarness(t, config{})
	h.fake.Script(fakeopenai.Turn{Text: "late", Hold: make(chan struct{})}) // cancelled when the test ends
	id := h.createThread()
	run := h.startRun(id, "wait")
	s := h.openStream(id, run.RunID, "")
	var evs []sseEvent
	beats := 0
	for beats < 3 {
		ev, ok, err := s.item()
		if err != nil || !ok {
			t.Fatalf("stream ended: %v; read:\n%s", err, dump(evs))
		}
		if ev.Comment != "" {
			if ev.Comment != "keep-alive" {
				t.Errorf("comment %q", ev.Comment)
			}
			beats++
			continue
		}
		evs = append(evs, ev)
	}
	if got := strings.Join(kinds(evs), ","); got != "metadata,values" && got != "metadata" {
		t.Errorf("events of an idle run: %s", got)
	}
}

func TestAPIOnDisconnectCancel(t *testing.T) {
	h := newHarness(t, config{})
	h.fake.Script(fakeopenai.Turn{Text: "never", Hold: make(chan struct{})})
	id := h.createThread()
	run := h.startRun(id, map[string]any{"input": msg("watch me"), "on_disconnect": "cancel"})
	s := h.openStream(id, run.RunID, "")
	s.until("values")
	h.fake.WaitRequests(1)
	s.close()
	h.fake.WaitCancelled(1)
	st := h.waitStatus(id, run.RunID, "interrupted")
	if st.Error != "cancelled" {
		t.Errorf("status = %+v", st)
	}
	// Its events say so to a client that comes back.
	if evs := h.collect(id, run.RunID); h.endStatus(evs) != "interrupted" {
		t.Errorf("events:\n%s", dump(evs))
	}
	wantError(t, h.request("POST", "/api/threads/"+id+"/runs", map[string]any{"input": msg("x"), "on_disconnect": "later"}), http.StatusUnprocessableEntity, "bad_on_disconnect")
}

func TestAPIOnDisconnectContinueByDefault(t *testing.T) {
	h := newHarness(t, config{})
	hold := make(chan struct{})
	h.fake.Script(fakeopenai.Turn{Text: "done without you", Hold: hold})
	id := h.createThread()
	for i, body := range []map[string]any{{"input": msg("default")}, {"input": msg("explicit"), "on_disconnect": "continue"}} {
		run := h.startRun(id, body)
		s := h.openStream(id, run.RunID, "")
		s.until("values")
		h.fake.WaitRequests(i + 1)
		s.close()
		if i == 0 {
			close(hold)
		}
		h.waitStatus(id, run.RunID, "success")
	}
	if n := h.fake.Cancelled(); n != 0 {
		t.Errorf("%d model calls cancelled", n)
	}
	th := h.getThread(id)
	if len(th.Values.Messages) != 4 || th.Values.Messages[1].Content != "done without you" {
		t.Errorf("messages = %+v", th.Values.Messages)
	}
}

// TestAPIOnDisconnectCancelWhileWaiting: a waiting run whose only client
// leaves is taken out of the queue and never runs.
func TestAPIOnDisconnectCancelWhileWaiting(t *testing.T) {
	h := newHarness(t, config{})
	id, first, hold := h.busyThread("first", "first done")
	waiting := h.startRun(id, map[string]any{"input": msg("waits"), "on_disconnect": "cancel"})
	s := h.openStream(id, waiting.RunID, "")
	s.close()
	h.waitStatus(id, waiting.RunID, "interrupted")
	close(hold)
	if h.endStatus(h.collect(id, first.RunID)) != "success" {
		t.Fatal("the first run failed")
	}
	if n := len(h.fake.Requests()); n != 1 {
		t.Errorf("%d model calls: the cancelled run ran", n)
	}
	if h.getThread(id).Status == "busy" {
		t.Error("busy")
	}
}
