package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/api"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/tools"
)

// compact drops repeats of a kind in a row.
func compact(ks []string) []string { return slices.Compact(slices.Clone(ks)) }

func TestAPIRunStreamsToTheAnswer(t *testing.T) {
	h := newHarness(t, config{tools: []tools.Tool{noteTool()}})
	answer := "Milk is noted. This answer is long enough to arrive in many small pieces, ünïcödé included."
	h.fake.Script(
		call("note", "milk"),
		fakeopenai.Turn{Reasoning: "Thinking it over.", Text: answer, Chunk: 5},
	)
	id := h.createThread()
	run := h.startRun(id, map[string]any{"input": map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "note milk"}},
	}})
	if run.Strategy != "enqueue" || (run.Status != "pending" && run.Status != "running") {
		t.Errorf("202 answer = %+v", run)
	}
	evs := h.collect(id, run.RunID)
	checkIDs(t, evs, 1)
	// LangGraph's order: metadata, the state once the run has begun, the
	// model's tool call (a chunk, then its update), the tool's result,
	// the state after that step, the answer's chunks, and the final state.
	want := []string{"metadata", "values", "messages", "updates", "messages", "updates", "values", "messages", "updates", "values", "end"}
	if got := compact(kinds(evs)); !slices.Equal(got, want) {
		t.Errorf("event kinds = %q, want %q\n%s", got, want, dump(evs))
	}
	deltas, final := streamed(t, evs)
	if final != answer || deltas != answer {
		t.Errorf("deltas %q, final %q, want %q", deltas, final, answer)
	}
	if n := len(of(evs, "messages")); n < 10 {
		t.Errorf("the answer came in %d pieces", n)
	}
	if h.endStatus(evs) != "success" {
		t.Errorf("end:\n%s", dump(evs))
	}
	var meta struct {
		RunID    string `json:"run_id"`
		ThreadID string `json:"thread_id"`
		Attempt  int    `json:"attempt"`
	}
	evs[0].decode(t, &meta)
	if evs[0].Kind != "metadata" || meta.RunID != run.RunID || meta.ThreadID != id || meta.Attempt != 1 {
		t.Errorf("metadata = %+v", meta)
	}
	cs := chunks(t, evs)
	call, result, reasoning := cs[0], cs[1], cs[2]
	if len(call.ToolCallChunks) != 1 || call.ToolCallChunks[0].Name != "note" || call.Node != "model" {
		t.Errorf("tool call chunk = %+v", call)
	}
	if result.Type != "tool" || result.Content != "noted: milk" || result.ToolCallID != call.ToolCallChunks[0].ID || result.Node != "tools" {
		t.Errorf("tool result = %+v", result)
	}
	if reasoning.Kwargs.Reasoning == "" || reasoning.ID == call.ID {
		t.Errorf("reasoning chunk = %+v (the tool call's message is %s)", reasoning, call.ID)
	}
	var usage struct {
		Usage struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		} `json:"usage_metadata"`
	}
	last := of(evs, "messages")[len(of(evs, "messages"))-1]
	var pair []json.RawMessage
	last.decode(t, &pair)
	json.Unmarshal(pair[0], &usage)
	if usage.Usage.Input == 0 || usage.Usage.Output == 0 {
		t.Errorf("the last chunk has no usage: %s", last)
	}
	// The final state's messages carry the ids the chunks had.
	var values struct{ Messages []messageJSON }
	of(evs, "values")[len(of(evs, "values"))-1].decode(t, &values)
	var types []string
	for _, m := range values.Messages {
		types = append(types, m.Type)
	}
	if !slices.Equal(types, []string{"human", "ai", "tool", "ai"}) || values.Messages[1].ID != call.ID || values.Messages[3].ID != reasoning.ID {
		t.Errorf("final values = %+v; chunks %s, %s", values.Messages, call.ID, reasoning.ID)
	}

	st := h.runStatus(id, run.RunID)
	if st.Status != "success" || st.Error != "" || st.AssistantID != "lead_agent" || st.Updated.Before(st.Created) {
		t.Errorf("status = %+v", st)
	}
	if got := roles(storedMessages(t, h.st, id)); !slices.Equal(got, []string{
		"user: note milk", "assistant: [note]", "tool: noted: milk", "assistant: " + answer,
	}) {
		t.Errorf("stored = %q", got)
	}
	// Streaming it again replays the same events.
	// (The values are the thread's now, not as they were at each step.)
	again := h.collect(id, run.RunID)
	noValues := func(evs []sseEvent) []sseEvent {
		return slices.DeleteFunc(slices.Clone(evs), func(e sseEvent) bool { return e.Kind == "values" })
	}
	if dump(noValues(again)) != dump(noValues(evs)) {
		t.Errorf("a second stream differs:\n%s\nfirst:\n%s", dump(again), dump(evs))
	}
}

func TestAPIRunInputForms(t *testing.T) {
	h := newHarness(t, config{})
	id := h.createThread()
	for _, c := range []struct {
		input any
		want  string
	}{
		{msg("an OpenAI message"), "an OpenAI message"},
		{map[string]any{"content": "a content field"}, "a content field"},
		{map[string]any{"message": "a message field"}, "a message field"},
		{map[string]any{"text": "a text field"}, "a text field"},
		{map[string]any{"messages": []map[string]any{
			{"role": "user", "content": "not this one"},
			{"role": "assistant", "content": "nor this"},
			{"role": "user", "content": "the last user message"},
			{"role": "assistant", "content": "never this"},
		}}, "the last user message"},
		{map[string]any{"messages": []map[string]any{
			{"type": "human", "content": []map[string]any{{"type": "text", "text": "parts "}, {"type": "image_url", "text": "x"}, {"type": "text", "text": "joined"}}},
		}}, "parts joined"},
	} {
		run := h.startRun(id, map[string]any{"input": c.input})
		if h.endStatus(h.collect(id, run.RunID)) != "success" {
			t.Fatalf("input %v failed", c.input)
		}
		reqs := h.fake.Requests()
		if got := lastUser(reqs[len(reqs)-1]); got != c.want {
			t.Errorf("input %v: the model got %q, want %q", c.input, got, c.want)
		}
	}
	// {"message": "…"} with no input at all.
	run := h.startRun(id, map[string]any{"message": "just a message"})
	if h.endStatus(h.collect(id, run.RunID)) != "success" {
		t.Fatal("a top-level message failed")
	}
	if reqs := h.fake.Requests(); lastUser(reqs[len(reqs)-1]) != "just a message" {
		t.Errorf("the model got %q", lastUser(reqs[len(reqs)-1]))
	}
}

// TestAPIRejectWhileBusy: reject refuses a run while one is active or
// waiting, and runs when the thread is idle.
func TestAPIRejectWhileBusy(t *testing.T) {
	h := newHarness(t, config{})
	id, first, hold := h.busyThread("first", "first done")
	busy := map[string]any{"input": msg("second"), "multitask_strategy": "reject"}
	wantError(t, h.request("POST", "/api/threads/"+id+"/runs", busy), http.StatusConflict, "thread_busy")
	queued := h.startRun(id, map[string]any{"input": msg("queued"), "multitask_strategy": "enqueue"})
	wantError(t, h.request("POST", "/api/threads/"+id+"/runs", busy), http.StatusConflict, "thread_busy")
	close(hold)
	if h.endStatus(h.collect(id, first.RunID)) != "success" || h.endStatus(h.collect(id, queued.RunID)) != "success" {
		t.Fatal("the runs failed")
	}
	// The stream has ended: the thread is idle, and reject runs.
	run := h.startRun(id, map[string]any{"input": msg("now"), "multitask_strategy": "REJECT"})
	if run.Strategy != "reject" || h.endStatus(h.collect(id, run.RunID)) != "success" {
		t.Errorf("reject on an idle thread: %+v", run)
	}
	if got := roles(storedMessages(t, h.st, id)); !slices.Equal(got, []string{
		"user: first", "assistant: first done", "user: queued", "assistant: answer to: queued",
		"user: now", "assistant: answer to: now",
	}) {
		t.Errorf("stored = %q", got)
	}
}

// TestAPIEnqueue: a run posted while another runs waits, then runs after
// it with its answer in the history; several wait in order.
func TestAPIEnqueue(t *testing.T) {
	h := newHarness(t, config{})
	id, first, hold := h.busyThread("first", "first done")
	second := h.startRun(id, "second")
	third := h.startRun(id, map[string]any{"input": msg("third"), "multitask_strategy": "enqueue"})
	for _, r := range []runJSON{second, third} {
		if r.Status != "pending" || r.Strategy != "enqueue" {
			t.Errorf("queued run = %+v", r)
		}
		if st := h.runStatus(id, r.RunID); st.Status != "pending" {
			t.Errorf("queued run status = %+v", st)
		}
	}
	if st := h.runStatus(id, first.RunID); st.Status != "running" {
		t.Errorf("first = %+v", st)
	}
	if h.getThread(id).Status != "busy" {
		t.Error("not busy")
	}
	// A stream of a waiting run stays open, idle, until it runs.
	s := h.openStream(id, third.RunID, "")
	close(hold)
	evs := s.rest()
	if h.endStatus(evs) != "success" || evs[0].Kind != "metadata" {
		t.Errorf("third:\n%s", dump(evs))
	}
	for _, r := range []runJSON{first, second} {
		if st := h.runStatus(id, r.RunID); st.Status != "success" {
			t.Errorf("%+v", st)
		}
	}
	reqs := h.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	var seen []string
	for _, m := range reqs[2].Messages[1:] {
		seen = append(seen, m.Role+": "+m.Content)
	}
	if want := []string{"user: first", "assistant: first done", "user: second", "assistant: answer to: second", "user: third"}; !slices.Equal(seen, want) {
		t.Errorf("the third run saw %q, want %q", seen, want)
	}
}

// TestAPIInterrupt: interrupt cancels the active run, which keeps what it
// stored (its message and its tool round), and the new run goes on from
// there.
func TestAPIInterrupt(t *testing.T) {
	h := newHarness(t, config{tools: []tools.Tool{noteTool()}})
	hold := make(chan struct{})
	defer close(hold)
	h.fake.Script(
		call("note", "eggs"),
		fakeopenai.Turn{Text: "An answer that is cut off before its end.", Hold: hold, HoldAfter: 3}, // the role, then two pieces
	)
	id := h.createThread()
	first := h.startRun(id, "first")
	s := h.openStream(id, first.RunID, "")
	evs := s.untilText()
	evs = append(evs, s.untilText()...) // two pieces: the model is mid-answer

	second := h.startRun(id, map[string]any{"input": msg("second"), "multitask_strategy": "interrupt"})
	if second.Strategy != "interrupt" {
		t.Errorf("%+v", second)
	}
	evs = append(evs, s.rest()...)
	checkIDs(t, evs, 1)
	if h.endStatus(evs) != "interrupted" || len(answers(t, evs)) != 0 || len(customs(t, evs, "rolled_back")) != 0 {
		t.Errorf("first run's events:\n%s", dump(evs))
	}
	h.fake.WaitCancelled(1)
	if st := h.runStatus(id, first.RunID); st.Status != "interrupted" || !strings.Contains(st.Error, "interrupted") {
		t.Errorf("first = %+v", st)
	}
	if h.endStatus(h.collect(id, second.RunID)) != "success" {
		t.Fatal("the second run failed")
	}
	if got := roles(storedMessages(t, h.st, id)); !slices.Equal(got, []string{
		"user: first", "assistant: [note]", "tool: noted: eggs", "user: second", "assistant: answer to: second",
	}) {
		t.Errorf("stored = %q", got)
	}
	reqs := h.fake.Requests()
	if n := len(reqs[2].Messages); n != 5 || reqs[2].Messages[3].Content != "noted: eggs" {
		t.Errorf("the second run did not see the first's tool round: %+v", reqs[2].Messages)
	}
	// On an idle thread, interrupt just runs.
	run := h.startRun(id, map[string]any{"input": msg("third"), "multitask_strategy": "interrupt"})
	if h.endStatus(h.collect(id, run.RunID)) != "success" {
		t.Error("interrupt on an idle thread failed")
	}
}

// TestAPIRollbackRestoresTheThreadExactly: a run cancelled by a rollback
// leaves the thread's stored bytes (record, sequence counter, messages)
// exactly as before it. The later run is cancelled while it waits, so
// that nothing else writes the thread; the rolled-back run is held in a
// tool call (which ignores cancellation) until then.
func TestAPIRollbackRestoresTheThreadExactly(t *testing.T) {
	t.Run("with history", func(t *testing.T) { testRollbackExact(t, true) })
	t.Run("first run", func(t *testing.T) { testRollbackExact(t, false) })
}

func testRollbackExact(t *testing.T, history bool) {
	b := newBlocker()
	h := newHarness(t, config{tools: []tools.Tool{b.tool(), noteTool()}})
	id := h.createThread()
	var want []string // what the model sees after the rollback
	if history {
		// Some history first, its title written.
		setup := h.startRun(id, "setup")
		h.collect(id, setup.RunID)
		h.agent.StopAll(context.Background(), nil) // no run is active: this waits for the title
		if th := h.getThread(id); th.Values.Title == "" {
			t.Fatalf("no title: %+v", th)
		}
		want = []string{"user: setup", "assistant: answer to: setup"}
	}
	before := dumpThreads(t, h.st)

	h.fake.Script(call("note", "one"), call("block", "two"))
	first := h.startRun(id, "to be undone")
	s := h.openStream(id, first.RunID, "")
	<-b.entered // a tool round stored, the second under way
	// The user's message, a call and its result, the blocked call.
	if n := len(storedMessages(t, h.st, id)); n != len(want)+4 {
		t.Errorf("%d messages stored before the rollback", n)
	}
	second := h.startRun(id, map[string]any{"input": msg("never runs"), "multitask_strategy": "rollback"})
	if second.Status != "pending" || second.Strategy != "rollback" {
		t.Errorf("%+v", second)
	}
	r := h.request("POST", "/api/threads/"+id+"/runs/"+second.RunID+"/cancel", nil)
	var cancelled runJSON
	r.decode(t, &cancelled)
	if r.status != http.StatusAccepted || cancelled.Status != "interrupted" {
		t.Errorf("cancel the waiting run: %s", r)
	}
	close(b.release)
	evs := s.rest()
	checkIDs(t, evs, 1)
	if h.endStatus(evs) != "interrupted" || len(customs(t, evs, "rolled_back")) != 1 {
		t.Errorf("events:\n%s", dump(evs))
	}
	// A rolled-back run is deleted, as in LangGraph.
	wantError(t, h.request("GET", "/api/threads/"+id+"/runs/"+first.RunID, nil), http.StatusNotFound, "rolled back")
	if h.getThread(id).Status == "busy" {
		t.Fatal("busy after the rollback")
	}
	sameDump(t, dumpThreads(t, h.st), before)

	// The thread goes on from where it was.
	run := h.startRun(id, "after")
	h.collect(id, run.RunID)
	reqs := h.fake.Requests()
	var seen []string
	for _, m := range reqs[len(reqs)-1].Messages[1:] {
		seen = append(seen, m.Role+": "+m.Content)
	}
	if want = append(want, "user: after"); !slices.Equal(seen, want) {
		t.Errorf("after the rollback the model saw %q, want %q", seen, want)
	}
	if got := storedMessages(t, h.st, id); got[len(got)-2].Seq != uint64(len(want)) {
		t.Errorf("the next run's message has seq %d, want %d", got[len(got)-2].Seq, len(want))
	}
}

// TestAPIRollbackThenNextRun: rollback cancels the active run, undoes it,
// and the new run proceeds on the thread as it was.
func TestAPIRollbackThenNextRun(t *testing.T) {
	h := newHarness(t, config{tools: []tools.Tool{noteTool()}})
	id := h.createThread()
	setup := h.startRun(id, "setup")
	h.collect(id, setup.RunID)
	h.agent.StopAll(context.Background(), nil) // the title
	beforeMsgs := storedMessages(t, h.st, id)
	before := dumpThreads(t, h.st)

	hold := make(chan struct{})
	defer close(hold)
	h.fake.Script(
		call("note", "x"),
		fakeopenai.Turn{Text: "This will be undone.", Hold: hold, HoldAfter: 2}, // the role, then a piece
	)
	first := h.startRun(id, "undo me")
	s := h.openStream(id, first.RunID, "")
	evs := s.untilText()
	second := h.startRun(id, map[string]any{"input": msg("instead"), "multitask_strategy": "rollback"})
	evs = append(evs, s.rest()...)
	checkIDs(t, evs, 1)
	if h.endStatus(evs) != "interrupted" || len(customs(t, evs, "rolled_back")) != 1 {
		t.Errorf("first run's events:\n%s", dump(evs))
	}
	if h.endStatus(h.collect(id, second.RunID)) != "success" {
		t.Fatal("the second run failed")
	}
	wantError(t, h.request("GET", "/api/threads/"+id+"/runs/"+first.RunID, nil), http.StatusNotFound, "rolled back")
	after := storedMessages(t, h.st, id)
	if got, want := roles(after), append(roles(beforeMsgs), "user: instead", "assistant: answer to: instead"); !slices.Equal(got, want) {
		t.Errorf("stored = %q, want %q", got, want)
	}
	// The messages from before are the same bytes; the new ones follow
	// them in sequence (the counter was put back).
	now := dumpThreads(t, h.st)
	for k, v := range before {
		if k.bucket == "messages" && now[k] != v {
			t.Errorf("message %q changed", k.key)
		}
	}
	last := beforeMsgs[len(beforeMsgs)-1].Seq
	if after[len(after)-2].Seq != last+1 || after[len(after)-1].Seq != last+2 {
		t.Errorf("seqs after the rollback: %d, %d; want %d, %d", after[len(after)-2].Seq, after[len(after)-1].Seq, last+1, last+2)
	}
	reqs := h.fake.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if strings.Contains(m.Content, "undo me") || strings.Contains(m.Content, "noted: x") {
			t.Errorf("the next run saw the undone run: %+v", reqs[len(reqs)-1].Messages)
		}
	}
}

func TestAPICancel(t *testing.T) {
	h := newHarness(t, config{})
	h.fake.Script(fakeopenai.Turn{Text: "never", Hold: make(chan struct{})})
	id := h.createThread()
	running := h.startRun(id, "running")
	h.fake.WaitRequests(1)
	waiting := h.startRun(id, "waiting")

	// A waiting run is taken out of the queue at once.
	r := h.request("POST", "/api/threads/"+id+"/runs/"+waiting.RunID+"/cancel", nil)
	var got runJSON
	r.decode(t, &got)
	if r.status != http.StatusAccepted || got.Status != "interrupted" {
		t.Errorf("cancel waiting: %s", r)
	}
	evs := h.collect(id, waiting.RunID)
	if h.endStatus(evs) != "interrupted" || !slices.Equal(kinds(evs), []string{"metadata", "values", "end"}) {
		t.Errorf("the cancelled waiting run's events:\n%s", dump(evs))
	}

	s := h.openStream(id, running.RunID, "")
	seen := s.until("values")
	if r := h.request("POST", "/api/threads/"+id+"/runs/"+running.RunID+"/cancel", nil); r.status != http.StatusAccepted {
		t.Errorf("cancel running: %s", r)
	}
	if h.endStatus(append(seen, s.rest()...)) != "interrupted" {
		t.Error("the running run did not end interrupted")
	}
	h.fake.WaitCancelled(1)
	if st := h.runStatus(id, running.RunID); st.Status != "interrupted" || st.Error != "cancelled" {
		t.Errorf("running = %+v", st)
	}
	if n := len(h.fake.Requests()); n != 1 {
		t.Errorf("%d model calls; the cancelled waiting run ran", n)
	}
	// Cancelling a finished run changes nothing.
	done := h.startRun(id, "quick")
	h.collect(id, done.RunID)
	r = h.request("POST", "/api/threads/"+id+"/runs/"+done.RunID+"/cancel", nil)
	r.decode(t, &got)
	if r.status != http.StatusAccepted || got.Status != "success" {
		t.Errorf("cancel a finished run: %s", r)
	}
	if got := roles(storedMessages(t, h.st, id)); !slices.Equal(got, []string{"user: running", "user: quick", "assistant: answer to: quick"}) {
		t.Errorf("stored = %q", got)
	}
}

func TestAPIRefuseAndClose(t *testing.T) {
	h := newHarness(t, config{})
	id, running, hold := h.busyThread("running", "finished in the grace period")
	waiting := h.startRun(id, "waiting")
	s := h.openStream(id, running.RunID, "")
	seen := s.until("values")

	h.runner.Refuse()
	wantError(t, h.request("POST", "/api/threads/"+id+"/runs", map[string]any{"input": msg("late")}), http.StatusServiceUnavailable, "shutting_down")
	if st := h.runStatus(id, waiting.RunID); st.Status != "pending" {
		t.Errorf("the waiting run = %+v", st)
	}
	// The running run goes on and ends; then Close ends the streams.
	close(hold)
	evs := append(seen, s.rest()...)
	if h.endStatus(evs) != "success" {
		t.Errorf("events:\n%s", dump(evs))
	}
	h.runner.Close(context.Background(), 0, errors.New("restart"))
	h.api.Close()
	if got := roles(storedMessages(t, h.st, id)); !slices.Equal(got, []string{"user: running", "assistant: finished in the grace period"}) {
		t.Errorf("stored = %q", got)
	}

	// The next process (a new Server on the same store) runs the waiting
	// run, under its id.
	h.srv.Close()
	h.runner = newRunner(t, h.st, h.agent, 64)
	h.opts.Runner = h.runner
	next, err := api.New(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	h.api, h.srv = next, httptest.NewServer(next)
	if _, _, err := h.runner.Recover(); err != nil {
		t.Fatal(err)
	}
	evs = h.collect(id, waiting.RunID)
	if h.endStatus(evs) != "success" {
		t.Errorf("the resumed run:\n%s", dump(evs))
	}
	if got := roles(storedMessages(t, h.st, id)); !slices.Equal(got, []string{"user: running", "assistant: finished in the grace period", "user: waiting", "assistant: answer to: waiting"}) {
		t.Errorf("stored after the resumed run = %q", got)
	}
	// Started once: a further restart has nothing to resume.
	h.runner.Close(context.Background(), 0, errors.New("restart"))
	h.opts.Runner = newRunner(t, h.st, h.agent, 64)
	again, err := api.New(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.opts.Runner.Recover(); err != nil {
		t.Fatal(err)
	}
	if again.Busy(id) {
		t.Error("a run that started was resumed again")
	}
}

// TestAPIRunUserID: user_id names the person a run is for, as the agent
// (and the run's record) sees it; a bad one is refused.
func TestAPIRunUserID(t *testing.T) {
	h := newHarness(t, config{})
	id := h.createThread()
	for input, want := range map[string]string{"anonymous": "api-thread:" + id, "named": "api:alice@example.com"} {
		body := map[string]any{"input": msg(input)}
		if input == "named" {
			body["user_id"] = "  alice@example.com "
		}
		run := h.startRun(id, body)
		h.collect(id, run.RunID)
		rec, err := h.st.Run(run.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.UserID != want {
			t.Errorf("%s: user %q, want %q", input, rec.UserID, want)
		}
	}
	for _, bad := range []string{strings.Repeat("u", 129), "a\nb", "a\x00b", "a\x7fb"} {
		wantError(t, h.request("POST", "/api/threads/"+id+"/runs", map[string]any{"input": msg("x"), "user_id": bad}), http.StatusUnprocessableEntity, "bad_user_id")
	}
}
