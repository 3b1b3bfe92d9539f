package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/api"
)

// TestLangGraphRoutes walks LangGraph's routes as an SDK uses them.
func TestLangGraphRoutes(t *testing.T) {
	h := newHarness(t, config{api: func(o *api.Options) { o.CORSOrigins = []string{"http://ui.example"} }})

	// The token as X-Api-Key; a CORS preflight without it.
	if r := h.request("POST", "/api/assistants/search", map[string]any{}, "Authorization", "", "X-Api-Key", token); r.status != http.StatusOK || !strings.Contains(string(r.body), `"assistant_id":"lead_agent"`) {
		t.Errorf("assistants with X-Api-Key: %s", r)
	}
	wantError(t, h.request("GET", "/api/assistants/lead_agent", nil, "Authorization", "", "X-Api-Key", "wrong"), http.StatusUnauthorized, "bad key")
	r := h.request("OPTIONS", "/api/threads", nil, "Authorization", "", "Origin", "http://ui.example", "Access-Control-Request-Method", "POST")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "http://ui.example" {
		t.Errorf("preflight: %s %v", r, r.header)
	}
	r = h.request("GET", "/api/assistants/lead_agent/graph", nil, "Origin", "http://ui.example")
	if r.status != http.StatusOK || !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "Content-Location") {
		t.Errorf("graph: %s %v", r, r.header)
	}
	wantError(t, h.request("GET", "/api/assistants/nobody", nil), http.StatusNotFound, "unknown assistant")

	// A thread with its own id and metadata; again: raise or do_nothing.
	body := map[string]any{"thread_id": "my-thread", "metadata": map[string]any{"owner": "ann"}}
	if r := h.request("POST", "/api/threads", body); r.status != http.StatusOK {
		t.Fatalf("create: %s", r)
	}
	wantError(t, h.request("POST", "/api/threads", body), http.StatusConflict, "exists")
	body["if_exists"] = "do_nothing"
	if r := h.request("POST", "/api/threads", body); r.status != http.StatusOK {
		t.Errorf("do_nothing: %s", r)
	}
	if r := h.request("PATCH", "/api/threads/my-thread", map[string]any{"metadata": map[string]any{"topic": "eggs"}}); r.status != http.StatusOK || !strings.Contains(string(r.body), `"owner":"ann"`) {
		t.Errorf("patch: %s", r)
	}
	other := h.createThread()

	// A run streamed: Content-Location names it; metadata comes first.
	r = h.request("POST", "/api/threads/my-thread/runs/stream", map[string]any{
		"assistant_id": "lead_agent", "input": msg("hello"), "stream_mode": []string{"values", "messages-tuple"},
	})
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Location"), "/threads/my-thread/runs/run_") {
		t.Fatalf("runs/stream: %s %v", r, r.header)
	}
	evs := parseAll(t, string(r.body), 0)
	if ks := kinds(evs); ks[0] != "metadata" || ks[len(ks)-1] != "end" || !slices.Contains(ks, "messages") {
		t.Errorf("runs/stream events:\n%s", dump(evs))
	}
	wantError(t, h.request("POST", "/api/threads/my-thread/runs/stream", map[string]any{"input": msg("x"), "stream_mode": "telepathy"}), http.StatusUnprocessableEntity, "stream mode")

	// wait answers the final values; a thread-less wait makes a thread.
	var values struct{ Messages []messageJSON }
	r = h.request("POST", "/api/threads/my-thread/runs/wait", map[string]any{"input": msg("again")})
	r.decode(t, &values)
	if r.status != http.StatusOK || len(values.Messages) != 4 || values.Messages[3].Content != "answer to: again" {
		t.Errorf("runs/wait: %s", r)
	}
	r = h.request("POST", "/api/runs/wait", map[string]any{"input": msg("on my own")})
	r.decode(t, &values)
	if r.status != http.StatusOK || len(values.Messages) != 2 || !strings.HasPrefix(r.header.Get("Content-Location"), "/threads/th_") {
		t.Errorf("thread-less wait: %s %v", r, r.header)
	}

	// The runs, newest first; join; delete.
	var runs []runJSON
	h.request("GET", "/api/threads/my-thread/runs", nil).decode(t, &runs)
	if len(runs) != 2 || runs[0].Status != "success" || runs[0].AssistantID != "lead_agent" {
		t.Fatalf("runs = %+v", runs)
	}
	if r := h.request("GET", "/api/threads/my-thread/runs/"+runs[0].RunID+"/join", nil); r.status != http.StatusOK || !strings.Contains(string(r.body), "answer to: again") {
		t.Errorf("join: %s", r)
	}
	if r := h.request("DELETE", "/api/threads/my-thread/runs/"+runs[1].RunID, nil); r.status != http.StatusNoContent {
		t.Errorf("delete run: %s", r)
	}
	wantError(t, h.request("GET", "/api/threads/my-thread/runs/"+runs[1].RunID, nil), http.StatusNotFound, "deleted run")

	// Search by metadata, with select; state; history; title; copy.
	var found []map[string]any
	h.request("POST", "/api/threads/search", map[string]any{"metadata": map[string]any{"topic": "eggs"}, "select": []string{"thread_id", "values"}}).decode(t, &found)
	if len(found) != 1 || found[0]["thread_id"] != "my-thread" || found[0]["values"] == nil || found[0]["status"] != nil {
		t.Errorf("search = %v", found)
	}
	var all []threadJSON
	h.request("POST", "/api/threads/search", map[string]any{"sort_by": "created_at", "sort_order": "asc"}).decode(t, &all)
	if len(all) != 3 || all[0].ThreadID != "my-thread" || all[1].ThreadID != other {
		t.Errorf("search all = %+v", all)
	}
	if r := h.request("POST", "/api/threads/my-thread/state", map[string]any{"values": map[string]any{"title": "Eggs"}}); r.status != http.StatusOK {
		t.Errorf("update state: %s", r)
	}
	var history []struct {
		Values struct{ Messages []messageJSON }
	}
	h.request("POST", "/api/threads/my-thread/history", map[string]any{"limit": 5}).decode(t, &history)
	if len(history) != 2 || len(history[0].Values.Messages) != 4 || len(history[1].Values.Messages) != 2 {
		t.Errorf("history = %+v", history)
	}
	var copied threadJSON
	h.request("POST", "/api/threads/my-thread/copy", nil).decode(t, &copied)
	if th := h.getThread(copied.ThreadID); th.Values.Title != "Eggs" || len(th.Values.Messages) != 4 || th.Metadata["owner"] != "ann" {
		t.Errorf("copy = %+v", th)
	}
}
