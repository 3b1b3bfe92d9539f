package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/api"
	"github.com/deerflow/deerflow/store"
)

func TestAPIThreadLifecycle(t *testing.T) {
	h := newHarness(t, config{})
	r := h.request("POST", "/api/threads", nil)
	if r.status != http.StatusOK {
		t.Fatalf("create: %s", r)
	}
	var created threadJSON
	r.decode(t, &created)
	if created.ThreadID == "" || created.Status != "idle" || created.Metadata == nil || len(created.Values.Messages) != 0 || created.Created.IsZero() {
		t.Errorf("created thread = %s", r)
	}
	id := created.ThreadID
	if th := h.getThread(id); th.ThreadID != id || len(th.Values.Messages) != 0 || th.Status == "busy" {
		t.Errorf("new thread = %+v", th)
	}

	run := h.startRun(id, "what is up?")
	if h.endStatus(h.collect(id, run.RunID)) != "success" {
		t.Fatal("the run failed")
	}
	th := h.getThread(id)
	var got []string
	for _, m := range th.Values.Messages {
		got = append(got, m.Type+": "+m.Content)
		if !strings.HasPrefix(m.ID, run.RunID+"-") {
			t.Errorf("message %+v: id %q, want one of run %q", m, m.ID, run.RunID)
		}
	}
	if want := []string{"human: what is up?", "ai: answer to: what is up?"}; !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
	if th.Status == "busy" {
		t.Error("busy after the run ended")
	}

	// A second thread is its own.
	other := h.createThread()
	if other == id {
		t.Fatal("two threads got one id")
	}
	if th := h.getThread(other); len(th.Values.Messages) != 0 {
		t.Errorf("a new thread shows another's messages: %+v", th.Values.Messages)
	}

	if r := h.request("DELETE", "/api/threads/"+id, nil); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("delete: %s", r)
	}
	wantError(t, h.request("GET", "/api/threads/"+id, nil), http.StatusNotFound, "thread_not_found")
	wantError(t, h.request("DELETE", "/api/threads/"+id, nil), http.StatusNotFound, "thread_not_found")
	wantError(t, h.request("POST", "/api/threads/"+id+"/runs", map[string]any{"input": msg("again")}), http.StatusNotFound, "thread_not_found")
	wantError(t, h.request("GET", "/api/threads/"+id+"/runs/"+run.RunID, nil), http.StatusNotFound, "thread_not_found")
	if msgs := storedMessages(t, h.st, id); len(msgs) != 0 {
		t.Errorf("the deleted thread's messages are still stored: %q", roles(msgs))
	}
	if th := h.getThread(other); th.ThreadID != other {
		t.Errorf("deleting a thread touched another: %+v", th)
	}
}

func TestAPICreateThreadWithModel(t *testing.T) {
	h := newHarness(t, config{})
	r := h.request("POST", "/api/threads", map[string]any{"model": "big"})
	if r.status != http.StatusOK {
		t.Fatalf("create: %s", r)
	}
	var th threadJSON
	r.decode(t, &th)
	run := h.startRun(th.ThreadID, "hi")
	h.collect(th.ThreadID, run.RunID)
	if reqs := h.fake.Requests(); len(reqs) != 1 || reqs[0].Model != "fake-big" {
		t.Errorf("the thread's model was not used: %+v", reqs)
	}
	// A run may pick another model (as DeerFlow's UI does, in context).
	run = h.startRun(th.ThreadID, map[string]any{"input": msg("again"), "context": map[string]any{"model_name": "default"}})
	h.collect(th.ThreadID, run.RunID)
	if reqs := h.fake.Requests(); len(reqs) != 2 || reqs[1].Model != "fake-model" {
		t.Errorf("the run's model was not used: %+v", reqs)
	}
	wantError(t, h.request("POST", "/api/threads", map[string]any{"model": "nope"}), http.StatusUnprocessableEntity, "unknown_model")
	wantError(t, h.request("POST", "/api/threads/"+th.ThreadID+"/runs", map[string]any{"input": msg("x"), "model": "nope"}), http.StatusUnprocessableEntity, "unknown_model")
}

func TestAPIDeleteBusyThread(t *testing.T) {
	h := newHarness(t, config{})
	id, run, hold := h.busyThread("slow", "late")
	wantError(t, h.request("DELETE", "/api/threads/"+id, nil), http.StatusConflict, "thread_busy")
	// Waiting runs make it busy too.
	queued := h.startRun(id, "after")
	if th := h.getThread(id); th.Status != "busy" {
		t.Error("busy = false with a run active")
	}
	close(hold)
	if h.endStatus(h.collect(id, run.RunID)) != "success" || h.endStatus(h.collect(id, queued.RunID)) != "success" {
		t.Fatal("the runs failed")
	}
	// Once the stream has ended, the thread is free.
	if r := h.request("DELETE", "/api/threads/"+id, nil); r.status != http.StatusNoContent {
		t.Errorf("delete after the runs: %s", r)
	}
}

func TestAPIUnknownAndChatThreads(t *testing.T) {
	h := newHarness(t, config{})
	now := time.Now()
	// A chat channel's thread, and one whose key names another API
	// thread: neither is the API's.
	for _, th := range []*store.Thread{
		{ID: "th_chat", ChatKey: "telegram:42", Created: now},
		{ID: "th_stolen", ChatKey: "api:th_other", Created: now},
		{ID: "th_nokey", Created: now},
	} {
		if err := h.st.Update(func(tx *store.Tx) error {
			if err := tx.PutThread(th); err != nil {
				return err
			}
			return tx.AppendMessages(th.ID, &store.Message{Role: "user", Content: "private words"})
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"th_chat", "th_stolen", "th_nokey", "th_missing", "th%00x", "..", "th_x%2fy"} {
		for _, rt := range [][2]string{
			{"GET", "/api/threads/" + id},
			{"DELETE", "/api/threads/" + id},
			{"POST", "/api/threads/" + id + "/runs"},
			{"GET", "/api/threads/" + id + "/runs/run_x"},
			{"POST", "/api/threads/" + id + "/runs/run_x/cancel"},
			{"GET", "/api/threads/" + id + "/runs/run_x/stream"},
			{"GET", "/api/threads/" + id + "/files/a.txt"},
		} {
			r := h.request(rt[0], rt[1], map[string]any{"input": msg("take over")})
			if r.status/100 == 3 && id == ".." {
				continue // the mux cleans the path; nothing is served
			}
			wantError(t, r, http.StatusNotFound, "thread_not_found")
		}
	}
	if msgs := storedMessages(t, h.st, "th_chat"); len(msgs) != 1 {
		t.Errorf("the chat thread changed: %q", roles(msgs))
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("%d model calls on threads that are not the API's", n)
	}
}

func TestAPIRunStatusAfterItIsForgotten(t *testing.T) {
	h := newHarness(t, config{})
	id := h.createThread()
	run := h.startRun(id, "remember me")
	h.collect(id, run.RunID)
	kept := h.runStatus(id, run.RunID)
	if kept.Status != "success" || kept.Updated.Before(kept.Created) || kept.Created.IsZero() {
		t.Errorf("kept status = %+v", kept)
	}

	// A new server over the same store (a restart) keeps no run: the
	// status comes from the store's record.
	fresh, err := api.New(api.Options{Token: token, Store: h.st, Agent: h.agent, Runner: newRunner(t, h.st, h.agent, 64)})
	if err != nil {
		t.Fatal(err)
	}
	h2 := *h
	h2.api = fresh
	h2.srv = newServer(t, fresh)
	got := h2.runStatus(id, run.RunID)
	if got.Status != "success" || got.RunID != run.RunID || got.ThreadID != id || got.Updated.IsZero() {
		t.Errorf("status from the store = %+v", got)
	}
	// Its events are gone with it: its stream is the thread's values and
	// the end.
	if evs := h2.openStream(id, run.RunID, "").rest(); !slices.Equal(kinds(evs), []string{"values", "end"}) {
		t.Errorf("a stream of a forgotten run:\n%s", dump(evs))
	}
	// Another thread's run is not found through this one.
	other := h.createThread()
	wantError(t, h.request("GET", "/api/threads/"+other+"/runs/"+run.RunID, nil), http.StatusNotFound, "run_not_found")
	wantError(t, h2.request("GET", "/api/threads/"+other+"/runs/"+run.RunID, nil), http.StatusNotFound, "run_not_found")
	wantError(t, h.request("GET", "/api/threads/"+id+"/runs/run_nope", nil), http.StatusNotFound, "run_not_found")
	wantError(t, h.request("POST", "/api/threads/"+id+"/runs/run_nope/cancel", nil), http.StatusNotFound, "run_not_found")
}

func TestAPIKeepExpires(t *testing.T) {
	h := newHarness(t, config{api: func(o *api.Options) { o.Keep = time.Millisecond }})
	id := h.createThread()
	run := h.startRun(id, "short-lived")
	s := h.openStream(id, run.RunID, "")
	if h.endStatus(s.rest()) != "success" {
		t.Fatal("the run failed")
	}
	// Wait until its events are forgotten; its status stays readable.
	deadline := time.Now().Add(waitLimit)
	for {
		if evs := h.openStream(id, run.RunID, "").rest(); len(of(evs, "metadata")) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run's events were kept past Keep")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := h.runStatus(id, run.RunID); got.Status != "success" {
		t.Errorf("status after Keep = %+v", got)
	}
}
