package api

import (
	"errors"
	"net/url"
	"path"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/runner"
)

// sse is a journaled event of a run as the stream sends it: its SSE event
// name and JSON payload; ok is false for events the API does not show
// (a research's status panel).
func (s *Server) sse(run *runner.Run, ev event.Event) (name string, data any, ok bool) {
	id := run.ID()
	switch ev := ev.(type) {
	case event.Began:
		return "metadata", map[string]any{"run_id": id, "thread_id": run.Req.ThreadID}, true
	case event.Started:
		return "run_started", map[string]any{"run_id": id, "model": ev.Model}, true
	case event.TextDelta:
		return "message_delta", map[string]string{"content": ev.Text}, true
	case event.ReasoningDelta:
		return "reasoning_delta", map[string]string{"content": ev.Text}, true
	case event.TextReset:
		return "message_reset", map[string]string{"reason": "the model call is being retried; discard the text since the last tool call"}, true
	case event.ToolCall:
		return "tool_start", map[string]any{"call_id": ev.CallID, "name": ev.Name, "summary": ev.Summary}, true
	case event.ToolResult:
		return "tool_end", map[string]any{"call_id": ev.CallID, "name": ev.Name, "summary": ev.Summary,
			"result": ev.Result, "is_error": ev.IsError, "duration_ms": ev.Duration.Milliseconds()}, true
	case event.FilesPresented:
		return s.files(run.Req.ThreadID, ev.Files)
	case event.TaskStarted, event.TaskProgress, event.TaskDone:
		return taskJSON(ev)
	case event.Answer:
		return "message", map[string]any{"role": "assistant", "content": ev.Text,
			"usage": usageJSON(ev.Usage)}, true
	case event.Error:
		code := "run_failed"
		if errors.Is(ev.Err, agent.ErrThreadBusy) {
			code = "thread_busy"
		}
		return "error", apiError{Code: code, Message: ev.Text}, true
	case event.RolledBack:
		if ev.Err != nil {
			return "error", apiError{Code: "rollback_failed", Message: "The run was stopped but the thread could not be restored: " + ev.Err.Error()}, true
		}
		return "rolled_back", map[string]string{"run_id": id}, true
	case event.Ended:
		return "end", map[string]any{"run_id": id, "status": ev.Status}, true
	case event.Stopped, event.Status, event.Clarification:
		return "", nil, false // the end event says how it stopped; the answer carries the question
	}
	return "", nil, false
}

// files is a FilesPresented event: each file with a url when the files
// route serves it.
func (s *Server) files(threadID string, files []event.File) (string, any, bool) {
	var out []map[string]any
	for _, f := range files {
		m := map[string]any{"name": f.Name, "path": f.Path, "size": f.Size}
		// The files route finds a file by its name in the outputs: a url
		// only for a file it serves (not one presented from a folder
		// inside them, which it would take for another). By the name on
		// disk: f.Name is cleaned for display.
		if name := path.Base(f.Path); plainName(name) && s.o.Files != nil {
			if got, err := s.o.Files(threadID, name); err == nil && got.Path == f.Path {
				m["url"] = "/api/threads/" + url.PathEscape(threadID) + "/files/" + url.PathEscape(name)
			}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return "", nil, false
	}
	return "files", map[string]any{"files": out}, true
}

// taskJSON is a subagent task's event.
func taskJSON(ev event.Event) (string, any, bool) {
	var te event.Task
	switch ev := ev.(type) {
	case event.TaskStarted:
		te = ev.Task
	case event.TaskProgress:
		te = ev.Task
	case event.TaskDone:
		te = ev.Task
	}
	m := map[string]any{"task_id": te.ID, "description": te.Description, "subagent_type": te.Type, "status": te.Status}
	switch ev.(type) {
	case event.TaskStarted:
		if te.Status == event.TaskPending {
			m["ahead"] = te.Ahead
		}
	case event.TaskProgress:
		m["line"] = te.Line
	case event.TaskDone:
		m["result"], m["duration_ms"] = te.Result, te.Duration.Milliseconds()
	}
	return event.Name(ev), m, true
}

// usageJSON is a run's usage as the API reports it; cost_usd only when the
// model's prices are configured.
func usageJSON(u event.Usage) map[string]any {
	m := map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens}
	if u.Cost > 0 {
		m["cost_usd"] = u.Cost
	}
	return m
}
