package lgwire

import (
	"strconv"

	"github.com/deerflow/deerflow/event"
)

// customEvent is a custom frame for what LangGraph's modes have no place
// for: subagent tasks (as DeerFlow's task tool reports them, keyed by
// task_id), clarifications, presented files, a research's status, a
// rollback. The thread's artifacts also reach values.
func (t *Translator) customEvent(out []Frame, ev event.Event) []Frame {
	var v map[string]any
	switch ev := ev.(type) {
	case event.FilesPresented:
		files := []map[string]any{}
		paths := []string{}
		for _, f := range ev.Files {
			m := map[string]any{"name": f.Name, "path": f.Path, "size": f.Size}
			if t.FileURL != nil {
				if u := t.FileURL(f.Path); u != "" {
					m["url"] = u
				}
			}
			files = append(files, m)
			paths = append(paths, f.Path)
		}
		if t.Modes[ModeUpdates] {
			out = append(out, Frame{"updates", map[string]any{nodeTools: map[string]any{"artifacts": paths}}})
		}
		v = map[string]any{"type": "files_presented", "files": files}
	case event.Clarification:
		v = map[string]any{"type": "clarification", "question": ev.Question, "options": nonNil(ev.Options)}
	case event.Status:
		v = map[string]any{"type": "status", "panel": ev.Panel, "line": ev.Line}
	case event.RolledBack:
		v = map[string]any{"type": "rolled_back", "run_id": t.RunID}
		if ev.Err != nil {
			v["error"] = "the thread could not be restored: " + ev.Err.Error()
		}
	case event.TaskStarted, event.TaskProgress, event.TaskDone:
		v = t.task(ev)
	}
	if v == nil {
		return out
	}
	return t.custom(out, v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// task is a subagent task's event as DeerFlow's UI reads it: task_started,
// task_running (each step an ai message), then task_completed,
// task_failed, task_cancelled or task_timed_out.
func (t *Translator) task(ev event.Event) map[string]any {
	switch ev := ev.(type) {
	case event.TaskStarted:
		return map[string]any{"type": "task_started", "task_id": ev.Task.ID, "description": ev.Task.Description,
			"subagent_type": ev.Task.Type, "status": ev.Task.Status}
	case event.TaskProgress:
		if t.steps == nil {
			t.steps = map[string]int{}
		}
		n := t.steps[ev.Task.ID]
		t.steps[ev.Task.ID]++
		msg := newMessage("ai", ev.Task.Line, ev.Task.ID+"-step-"+strconv.Itoa(n))
		return map[string]any{"type": "task_running", "task_id": ev.Task.ID, "message": msg, "message_index": n}
	case event.TaskDone:
		m := map[string]any{"task_id": ev.Task.ID, "duration_ms": ev.Task.Duration.Milliseconds()}
		if u := ev.Task.Usage; u.PromptTokens+u.CompletionTokens > 0 {
			m["usage"] = map[string]any{"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens,
				"total_tokens": u.PromptTokens + u.CompletionTokens, "cost_usd": u.Cost}
		}
		switch ev.Task.Status {
		case event.TaskCompleted:
			m["type"], m["result"] = "task_completed", ev.Task.Result
		case event.TaskCancelled, event.TaskInterrupted:
			m["type"], m["error"] = "task_cancelled", ev.Task.Result
		case event.TaskTimedOut:
			m["type"], m["error"] = "task_timed_out", ev.Task.Result
		default:
			m["type"], m["error"] = "task_failed", ev.Task.Result
		}
		return m
	}
	return nil
}
