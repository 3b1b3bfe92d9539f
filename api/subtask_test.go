package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/api"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/tools"
)

// wireMessage is a LangChain message with the fields these tests check.
type wireMessage struct {
	Type       string         `json:"type"`
	ID         string         `json:"id"`
	Content    string         `json:"content"`
	ToolCallID string         `json:"tool_call_id"`
	Kwargs     map[string]any `json:"additional_kwargs"`
}

// TestAPITaskResultKwargsAndToolIDs: a task tool's result carries
// DeerFlow's subagent_status (and brief, and subagent_token_usage) in
// additional_kwargs in the stream, the values and the history; a tool call
// id the provider reuses in the next run still gives each tool message its
// own id, the same in the stream and in the state.
func TestAPITaskResultKwargsAndToolIDs(t *testing.T) {
	task := tools.Func("task", "Runs a subagent.", func(_ context.Context, in struct {
		Description string `json:"description"`
	}) (string, error) {
		return "Task \"" + in.Description + "\" (general-purpose, task_1)\nStatus: completed\nDuration: 1s\nTokens: 1200 in, 300 out\n\nThere are 3 apples.", nil
	})
	h := newHarness(t, config{tools: []tools.Tool{task}})
	turn := fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "task", Arguments: `{"description":"Count"}`}}}
	h.fake.Script(turn, fakeopenai.Turn{Text: "first"}, turn, fakeopenai.Turn{Text: "second"})
	id := h.createThread()
	var streamedIDs []string
	for _, text := range []string{"count the apples", "count them again"} {
		run := h.startRun(id, text)
		for _, c := range chunks(t, h.collect(id, run.RunID)) {
			if c.Type == "tool" {
				streamedIDs = append(streamedIDs, c.ID)
			}
		}
		if want := run.RunID + "-tool-call_1"; !slices.Contains(streamedIDs, want) {
			t.Errorf("streamed tool message ids %q, want %q among them", streamedIDs, want)
		}
	}
	for _, e := range of(h.collect(id, h.lastRun(id)), "messages") {
		var pair []json.RawMessage
		e.decode(t, &pair)
		var m wireMessage
		json.Unmarshal(pair[0], &m)
		if m.Type == "tool" && m.Kwargs["subagent_status"] != "completed" {
			t.Errorf("streamed task result %+v has no subagent_status completed", m)
		}
	}
	var state struct {
		Values struct{ Messages []wireMessage } `json:"values"`
	}
	h.request("GET", "/api/threads/"+id+"/state", nil).decode(t, &state)
	var ids []string
	for _, m := range state.Values.Messages {
		if m.Type != "tool" {
			continue
		}
		ids = append(ids, m.ID)
		if m.Kwargs["subagent_status"] != "completed" || m.Kwargs["subagent_result_brief"] != "There are 3 apples." {
			t.Errorf("task result in the values: %+v", m)
		}
		if u, _ := m.Kwargs["subagent_token_usage"].(map[string]any); u["input_tokens"] != 1200.0 || u["output_tokens"] != 300.0 || u["total_tokens"] != 1500.0 {
			t.Errorf("task result's subagent_token_usage = %v", m.Kwargs["subagent_token_usage"])
		}
	}
	if len(ids) != 2 || ids[0] == ids[1] || !slices.Equal(ids, streamedIDs) {
		t.Errorf("tool message ids in the values %q, streamed %q: want two distinct, the same", ids, streamedIDs)
	}
	var hist []struct {
		Values struct{ Messages []wireMessage } `json:"values"`
	}
	h.request("GET", "/api/threads/"+id+"/history", nil).decode(t, &hist)
	if len(hist) != 2 {
		t.Fatalf("history has %d states", len(hist))
	}
	for _, m := range hist[1].Values.Messages {
		if m.Type == "tool" && (m.ID != ids[0] || m.Kwargs["subagent_status"] != "completed") {
			t.Errorf("task result in the history: %+v, want id %s", m, ids[0])
		}
	}
}

// lastRun is the thread's newest run.
func (h *harness) lastRun(thread string) string {
	h.t.Helper()
	var runs []runJSON
	h.request("GET", "/api/threads/"+thread+"/runs", nil).decode(h.t, &runs)
	if len(runs) == 0 {
		h.t.Fatal("no runs")
	}
	return runs[0].RunID
}

// TestAPIInputFilesNote: the files a run's message lists in
// additional_kwargs.files (DeerFlow's UI, after uploading them) are told
// to the model by the note Options.UploadsNote makes, in front of the
// text, and stored so, as the chat channels store a message with files.
func TestAPIInputFilesNote(t *testing.T) {
	var gotThread string
	var gotPaths []string
	h := newHarness(t, config{api: func(o *api.Options) {
		o.UploadsNote = func(thread string, paths []string) string {
			gotThread, gotPaths = thread, paths
			return "<uploaded_files>" + strings.Join(paths, ",") + "</uploaded_files>"
		}
	}})
	var seen string
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		seen = lastUser(r)
		return fakeopenai.Turn{Text: "ok"}
	})
	id := h.createThread()
	run := h.startRun(id, map[string]any{"input": map[string]any{"messages": []map[string]any{{
		"type": "human", "content": []map[string]any{{"type": "text", "text": "summarize my notes"}},
		"additional_kwargs": map[string]any{"files": []map[string]any{
			{"filename": "notes.txt", "size": 5, "path": "/mnt/user-data/uploads/notes.txt", "status": "uploaded"}}},
	}}}})
	h.collect(id, run.RunID)
	want := "<uploaded_files>/mnt/user-data/uploads/notes.txt</uploaded_files>\n\nsummarize my notes"
	if gotThread != id || !slices.Equal(gotPaths, []string{"/mnt/user-data/uploads/notes.txt"}) || seen != want {
		t.Errorf("note for %s %q; the model saw %q, want %q", gotThread, gotPaths, seen, want)
	}
	if got := storedMessages(t, h.st, id)[0].Content; got != want {
		t.Errorf("stored %q, want %q", got, want)
	}
	// Without files there is no note.
	run = h.startRun(id, "plain")
	h.collect(id, run.RunID)
	if seen != "plain" {
		t.Errorf("the model saw %q", seen)
	}
}
