package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/api"
)

func TestAPILimitsAndBadRequests(t *testing.T) {
	h := newHarness(t, config{api: func(o *api.Options) { o.MaxBody = 1024; o.MaxInput = 50 }})
	id := h.createThread()
	runs := "/api/threads/" + id + "/runs"

	big := `{"input":"` + strings.Repeat("x", 2000) + `"}`
	wantError(t, h.request("POST", runs, big), http.StatusRequestEntityTooLarge, "too_large")
	wantError(t, h.request("POST", "/api/threads", `{"model":"`+strings.Repeat("m", 2000)+`"}`), http.StatusRequestEntityTooLarge, "too_large")
	wantError(t, h.request("POST", runs, map[string]any{"input": msg(strings.Repeat("y", 51))}), http.StatusRequestEntityTooLarge, "input_too_large")
	// 50 characters, more bytes: the limit counts characters.
	var started []string
	if r := h.request("POST", runs, map[string]any{"input": msg(strings.Repeat("é", 50)), "multitask_strategy": "reject"}); r.status != http.StatusOK {
		t.Errorf("50 characters: %s", r)
	} else {
		var run runJSON
		r.decode(t, &run)
		started = append(started, run.RunID)
	}

	for _, c := range []struct {
		body string
		code string
	}{
		{`{"input":`, "bad_json"},
		{`not json`, "bad_json"},
		{`{"input": 42}`, "bad_input"},
		{`{"input": ["a"]}`, "bad_input"},
		{`{"input": true}`, "bad_input"},
		{`{"input": 1, "multitask_strategy": 2}`, "bad_json"},
		{``, "bad_input"},
		{`{}`, "bad_input"},
		{`{"input": null}`, "bad_input"},
		{`{"input": ""}`, "bad_input"},
		{`{"input": "  \n\t "}`, "bad_input"},
		{`{"input": {"messages": []}}`, "bad_input"},
		{`{"input": {"messages": [{"role": "assistant", "content": "hi"}]}}`, "bad_input"},
		{`{"input": {"messages": [{"role": "user", "content": ""}]}}`, "bad_input"},
		{`{"input": {"messages": [{"role": "user", "content": 7}]}}`, "bad_input"},
		{`{"input": {"content": " "}}`, "bad_input"},
		{`{"input": {"messages": [{"role": "user", "content": "hi"}]}, "multitask_strategy": "later"}`, "bad_strategy"},
		{`{"input": {"messages": [{"role": "user", "content": "hi"}]}, "multitask_strategy": "enqueue "}`, ""}, // trimmed
		{`{"input": {"messages": [{"role": "user", "content": "hi"}]}, "on_disconnect": "explode"}`, "bad_on_disconnect"},
		{`{"input": {"messages": [{"role": "user", "content": "hi"}]}, "model": "nope"}`, "unknown_model"},
		{`{"input": {"messages": [{"role": "user", "content": "hi"}]}, "stream_mode": "telepathy"}`, "unknown stream mode"},
		{`{"input": {"messages": [{"role": "user", "content": "hi"}]}, "stream_mode": ["values", 7]}`, "bad stream_mode"},
		{`{"input": {"messages": [{"role": "user", "content": "hi"}]}, "if_not_exists": "maybe"}`, "bad if_not_exists"},
		{`{"input": {"messages": "hi"}}`, "messages not a list"},
		{`{"input": [1, 2]}`, "input not an object"},
	} {
		r := h.request("POST", runs, c.body)
		if c.code == "" {
			if r.status != http.StatusOK {
				t.Errorf("%s: %s", c.body, r)
			} else {
				var run runJSON
				r.decode(t, &run)
				started = append(started, run.RunID)
			}
			continue
		}
		wantError(t, r, http.StatusUnprocessableEntity, c.code)
	}
	wantError(t, h.request("POST", "/api/threads", `{"model":`), http.StatusUnprocessableEntity, "bad_json")
	wantError(t, h.request("POST", runs, `{"input": {"messages": [{"role": "user", "content": "hi"}]}, "assistant_id": "nobody"}`), http.StatusNotFound, "unknown assistant")
	// Let the runs end before the test does.
	for _, run := range started {
		h.waitStatus(id, run, "success")
	}
}
