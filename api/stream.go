package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/runner"
)

// joinStream follows a run's stream (GET …/runs/{run}/stream) in the
// modes of ?stream_mode (by default the run's), after the event named by Last-Event-ID. A run no
// longer kept (it ended a while ago) gets its thread's values and the end.
func (s *Server) joinStream(w http.ResponseWriter, req *http.Request) {
	t, ok := s.thread(w, req.PathValue("id"))
	if !ok {
		return
	}
	e, ok := s.entry(w, t, req.PathValue("run"))
	if !ok {
		return
	}
	asked := req.URL.Query()["stream_mode"]
	if len(asked) == 0 {
		asked = e.Modes // the run's own (a reconnecting SDK sends none)
	}
	modes, err := lgwire.ModesQuery(asked)
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, err.Error()+".")
		return
	}
	after, ok := lastEventID(req)
	if !ok {
		fail(w, http.StatusUnprocessableEntity, "Last-Event-ID must be the id of an event of this stream.")
		return
	}
	run, ok := s.lookup(t.ID, e.ID)
	if !ok {
		bw, flush := openSSE(w)
		if modes[lgwire.ModeValues] {
			if v, err := s.values(t.ID); err == nil {
				writeFrame(bw, lgwire.Frame{Event: "values", Data: v}, "")
			}
		}
		writeFrame(bw, lgwire.Frame{Event: "end"}, "")
		flush()
		return
	}
	s.follow(w, req, run, modes, after, req.URL.Query().Get("cancel_on_disconnect") == "1")
}

// follow sends a run's events as LangGraph stream events, from after the
// journal record after. Each event's id is the journal sequence number of
// the record it comes from, so a client reconnecting with Last-Event-ID
// gets what came after: ids grow but skip records the modes asked for do
// not show, and a record that makes several events sends its id on the
// last (a client cut off between them gets the record again). Records
// older than the journal keeps are reported as one custom
// stream_replay_gap event (DeerFlow's UI reloads the thread on it). An
// idle stream gets a comment every Heartbeat. The stream ends after the
// run's end event. A client that goes away does not stop the run, unless
// it was started with on_disconnect "cancel" (or cancel is set) and no
// other client watches it.
func (s *Server) follow(w http.ResponseWriter, req *http.Request, run *runner.Run, modes lgwire.Modes, after int, cancel bool) {
	tr := &lgwire.Translator{RunID: run.ID(), ThreadID: run.Req.ThreadID, Modes: modes, Input: run.Req.Text,
		Values: func() map[string]any {
			v, err := s.values(run.Req.ThreadID)
			if err != nil {
				return map[string]any{}
			}
			return v
		},
		FileURL: func(p string) string { return s.fileURL(run.Req.ThreadID, p) },
	}
	bw, flush := openSSE(w)
	defer s.watch(run, cancel)()

	beat := time.NewTicker(s.o.Heartbeat)
	defer beat.Stop()
	closing := false // the Server is closing: send what is kept, then end
	for {
		recs, ended, wake := run.Read(after)
		after = writeEvents(bw, tr, after, recs)
		if bw.Buffered() > 0 && !flush() { // new events, a gap, or the opening retry line
			return
		}
		if (ended && len(recs) == 0) || closing {
			return
		}
		if len(recs) > 0 {
			continue
		}
		select {
		case <-wake:
		case <-beat.C:
			fmt.Fprintf(bw, ": keep-alive\n\n")
			if !flush() {
				return
			}
		case <-req.Context().Done():
			return
		case <-s.closing:
			closing = true
		}
	}
}

// openSSE starts an event stream on w, with no write deadline (a stream
// lasts as long as its run) and the reconnection delay written first. It
// returns the stream's buffer and how to flush it to the client (false:
// the client is gone).
func openSSE(w http.ResponseWriter) (*bufio.Writer, func() bool) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	// no-transform: a proxy in between (the Next.js server of DeerFlow's
	// UI) must not compress the stream, which holds it back to the end.
	h.Set("Cache-Control", "no-store, no-transform")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "retry: 2000\n\n")
	return bw, func() bool { return bw.Flush() == nil && rc.Flush() == nil }
}

// writeEvents buffers the frames of the records read after the record
// after: a gap event first when older ones are no longer kept. It returns
// the sequence number of the last record.
func writeEvents(bw *bufio.Writer, tr *lgwire.Translator, after int, recs []runner.Record) int {
	if len(recs) > 0 && recs[0].Seq > after+1 {
		from, to := after+1, recs[0].Seq-1
		writeFrame(bw, lgwire.Frame{Event: "custom", Data: map[string]any{"type": "stream_replay_gap", "from": from, "to": to,
			"message": fmt.Sprintf("events %d to %d are no longer kept", from, to)}}, "")
	}
	for _, rec := range recs {
		after = rec.Seq
		frames := tr.Frames(rec.Event)
		for i, f := range frames {
			id := ""
			if i == len(frames)-1 {
				id = strconv.Itoa(rec.Seq)
			}
			writeFrame(bw, f, id)
		}
	}
	return after
}

// writeFrame buffers one SSE event.
func writeFrame(bw *bufio.Writer, f lgwire.Frame, id string) {
	data, err := json.Marshal(f.Data)
	if err != nil {
		data = []byte(`null`)
	}
	fmt.Fprintf(bw, "event: %s\ndata: %s\n", f.Event, data)
	if id != "" {
		fmt.Fprintf(bw, "id: %s\n", id)
	}
	bw.WriteString("\n")
}

// lastEventID is the id of the last event the client saw (0: none).
func lastEventID(req *http.Request) (int, bool) {
	last := req.Header.Get("Last-Event-ID")
	if last == "" {
		last = req.URL.Query().Get("last_event_id")
	}
	if last == "" {
		return 0, true
	}
	n, err := strconv.Atoi(strings.TrimSpace(last))
	return n, err == nil && n >= 0
}

// watch counts a stream client of run; the returned func, when the client
// goes, cancels the run if it was started with on_disconnect "cancel" and
// no other client watches it.
func (s *Server) watch(run *runner.Run, cancel bool) func() {
	id := run.ID()
	s.mu.Lock()
	s.clients[id]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.clients[id]--
		left := s.clients[id] == 0
		if left {
			delete(s.clients, id)
		}
		s.mu.Unlock()
		if left && run.Info().Ended.IsZero() && (cancel || cancelOnDisconnect(run)) {
			s.log.Info("api: the last client of a run went away; cancelling it (on_disconnect cancel)", "run", id)
			s.o.Runner.Cancel(id, nil)
		}
	}
}
