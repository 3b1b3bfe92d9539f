package api

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// stream sends a run's events as Server-Sent Events: each with its id, so
// that a client reconnecting with Last-Event-ID gets the events after it.
// Events older than the buffer are reported as one gap event. An idle
// stream gets a comment every Heartbeat. The stream ends after the run's
// end event. A client that goes away does not stop the run, unless it was
// started with on_disconnect "cancel" and no other client watches it.
func (s *Server) stream(w http.ResponseWriter, req *http.Request) {
	t, ok := s.thread(w, req.PathValue("id"))
	if !ok {
		return
	}
	r, ok := s.lookup(t.ID, req.PathValue("run"))
	if !ok {
		fail(w, http.StatusNotFound, "run_not_found", fmt.Sprintf("Thread %s has no run %q whose events are kept (a finished run's are kept for a while; its status stays readable).", t.ID, req.PathValue("run")))
		return
	}
	from := 1
	last := req.Header.Get("Last-Event-ID")
	if last == "" {
		last = req.URL.Query().Get("last_event_id")
	}
	if last != "" {
		n, err := strconv.Atoi(strings.TrimSpace(last))
		if err != nil || n < 0 {
			fail(w, http.StatusBadRequest, "bad_last_event_id", "Last-Event-ID must be the id of an event of this stream.")
			return
		}
		from = n + 1
	}
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // a stream lasts as long as its run
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "retry: 2000\n\n")

	r.mu.Lock()
	r.clients++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.clients--
		left := r.clients == 0 && !r.done && r.cancelOnDisconnect
		r.mu.Unlock()
		if left {
			s.log.Info("api: the last client of a run went away; cancelling it (on_disconnect cancel)", "run", r.id)
			s.cancel(r)
		}
	}()

	beat := time.NewTicker(s.o.Heartbeat)
	defer beat.Stop()
	closing := false // the Server is closing: send what is kept, then end
	for {
		r.mu.Lock()
		var batch []event
		gapFrom, gapTo := 0, 0
		if from < r.first && r.first < r.next {
			gapFrom, gapTo = from, r.first-1
			from = r.first
		}
		if from < r.next {
			batch = append(batch, r.events[from-r.first:]...)
			from = r.next
		}
		ended := r.done && from >= r.next
		wake := r.wake
		r.mu.Unlock()

		if gapFrom > 0 {
			fmt.Fprintf(bw, "event: gap\ndata: {\"from\":%d,\"to\":%d,\"message\":\"events %d to %d are no longer kept\"}\n\n", gapFrom, gapTo, gapFrom, gapTo)
		}
		for _, ev := range batch {
			fmt.Fprintf(bw, "id: %d\nevent: %s\ndata: %s\n\n", ev.id, ev.kind, ev.data)
		}
		if bw.Buffered() > 0 { // new events, a gap, or the opening retry line
			if bw.Flush() != nil || rc.Flush() != nil {
				return
			}
		}
		if ended || closing {
			return
		}
		select {
		case <-wake:
		case <-beat.C:
			fmt.Fprintf(bw, ": keep-alive\n\n")
			if bw.Flush() != nil || rc.Flush() != nil {
				return
			}
		case <-req.Context().Done():
			return
		case <-s.closing:
			closing = true
		}
	}
}
