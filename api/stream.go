package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/runner"
)

// stream sends a run's events as Server-Sent Events: each with its id, so
// that a client reconnecting with Last-Event-ID gets the events after it.
// Events older than the journal keeps are reported as one gap event. An
// idle stream gets a comment every Heartbeat. The stream ends after the
// run's end event. A client that goes away does not stop the run, unless
// it was started with on_disconnect "cancel" and no other client watches
// it.
func (s *Server) stream(w http.ResponseWriter, req *http.Request) {
	t, ok := s.thread(w, req.PathValue("id"))
	if !ok {
		return
	}
	run, ok := s.lookup(t.ID, req.PathValue("run"))
	if !ok {
		fail(w, http.StatusNotFound, "run_not_found", fmt.Sprintf("Thread %s has no run %q whose events are kept (a finished run's are kept for a while; its status stays readable).", t.ID, req.PathValue("run")))
		return
	}
	after, ok := lastEventID(req)
	if !ok {
		fail(w, http.StatusBadRequest, "bad_last_event_id", "Last-Event-ID must be the id of an event of this stream.")
		return
	}
	bw, flush := openSSE(w)
	defer s.watch(run)()

	beat := time.NewTicker(s.o.Heartbeat)
	defer beat.Stop()
	closing := false // the Server is closing: send what is kept, then end
	for {
		recs, ended, wake := run.Read(after)
		after = s.writeEvents(bw, run, after, recs)
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
	h.Set("Cache-Control", "no-store")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "retry: 2000\n\n")
	return bw, func() bool { return bw.Flush() == nil && rc.Flush() == nil }
}

// writeEvents buffers the records read after the event after: a gap event
// first when older ones are no longer kept, then each event the API shows.
// It returns the id of the last record.
func (s *Server) writeEvents(bw *bufio.Writer, run *runner.Run, after int, recs []runner.Record) int {
	if len(recs) > 0 && recs[0].Seq > after+1 {
		from, to := after+1, recs[0].Seq-1
		fmt.Fprintf(bw, "event: gap\ndata: {\"from\":%d,\"to\":%d,\"message\":\"events %d to %d are no longer kept\"}\n\n", from, to, from, to)
	}
	for _, rec := range recs {
		after = rec.Seq
		name, v, ok := s.sse(run, rec.Event)
		if !ok {
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			data = []byte(`{}`)
		}
		fmt.Fprintf(bw, "id: %d\nevent: %s\ndata: %s\n\n", rec.Seq, name, data)
	}
	return after
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
func (s *Server) watch(run *runner.Run) func() {
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
		if left && run.Info().Ended.IsZero() && cancelOnDisconnect(run) {
			s.log.Info("api: the last client of a run went away; cancelling it (on_disconnect cancel)", "run", id)
			s.o.Runner.Cancel(id, nil)
		}
	}
}
