package api

import (
	"context"
	"errors"
	"net/url"
	"path"

	"github.com/deerflow/deerflow/agent"
	// runevent: api has its own type event (an SSE event, runs.go).
	runevent "github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// execute runs r through the agent and turns its events into the run's
// stream. A run cancelled for a rollback is undone before the next run
// starts. It returns the status to finish r with ("" when r had already
// finished: cancelled while it waited).
func (s *Server) execute(r *run) (status, errText string) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var snap *store.ThreadSnapshot
	err := s.o.Store.View(func(tx *store.Tx) error {
		var err error
		snap, err = tx.SnapshotThread(r.threadID)
		return err
	})
	r.mu.Lock()
	if r.done { // cancelled while it waited
		r.mu.Unlock()
		return "", ""
	}
	r.cancel, r.snap = cancel, snap
	r.status, r.started = statusRunning, s.o.Now()
	if r.stop != nil {
		cancel(r.stop)
	}
	r.mu.Unlock()
	if err != nil {
		s.unpersist(r)
		s.log.Error("api: reading the thread before a run", "thread", r.threadID, "err", err)
		r.add("error", apiError{Code: "store_error", Message: "The thread could not be read; try again."})
		return statusError, err.Error()
	}
	r.add("metadata", map[string]any{"run_id": r.id, "thread_id": r.threadID})

	status, errText = statusError, "the run ended without an answer"
	for ev := range s.o.Agent.Run(ctx, agent.Input{
		RunID: r.id, ThreadID: r.threadID, ChatKey: chatKey(r.threadID), UserID: r.user,
		Text: r.input, Model: r.model, OnBegin: r.onBegin(),
	}) {
		switch ev := ev.(type) {
		case runevent.Answer:
			r.add("message", map[string]any{"role": "assistant", "content": ev.Text,
				"usage": map[string]int{"prompt_tokens": ev.Usage.PromptTokens, "completion_tokens": ev.Usage.CompletionTokens}})
			status, errText = statusSuccess, ""
		case runevent.Error:
			code := "run_failed"
			if errors.Is(ev.Err, agent.ErrThreadBusy) {
				code = "thread_busy"
			}
			r.add("error", apiError{Code: code, Message: ev.Text})
			status, errText = statusError, ev.Text
		case runevent.Stopped:
			status, errText = statusInterrupted, stopText(ev.Err, context.Cause(ctx))
		default:
			s.progress(r, ev)
		}
	}
	if !r.began.Load() {
		s.unpersist(r) // it never started (the agent refused it): not again after a restart
	}
	r.mu.Lock()
	rollback := r.rollback
	r.mu.Unlock()
	if rollback {
		if err := s.restore(r); err != nil {
			s.log.Error("api: rolling back a run", "thread", r.threadID, "run", r.id, "err", err)
			r.mu.Lock()
			r.rollback = false // it was not rolled back
			r.mu.Unlock()
			r.add("error", apiError{Code: "rollback_failed", Message: "The run was stopped but the thread could not be restored: " + err.Error()})
		} else {
			r.add("rolled_back", map[string]string{"run_id": r.id})
			status, errText = statusInterrupted, "rolled back by a later run (multitask_strategy rollback)"
		}
	}
	return status, errText
}

// onBegin takes r out of the run queue in the transaction that starts it:
// after a crash it either runs again or is known to have started.
func (r *run) onBegin() func(*store.Tx) error {
	if r.seq == 0 {
		return nil
	}
	return func(tx *store.Tx) error {
		r.began.Store(true)
		return tx.DeleteQueuedRun(r.seq)
	}
}

// restore puts r's thread back as it was before r.
func (s *Server) restore(r *run) error {
	if r.snap == nil {
		return errors.New("no snapshot was taken")
	}
	err := s.o.Store.Update(func(tx *store.Tx) error { return tx.RestoreThread(r.snap) })
	s.o.Agent.ForgetHistory(r.threadID)
	return err
}

func stopText(evErr, cause error) string {
	switch {
	case errors.Is(cause, errCancelled):
		return "cancelled"
	case errors.Is(evErr, agent.ErrStopped), errors.Is(cause, agent.ErrStopped):
		return "interrupted by a later run"
	}
	return "interrupted: deerflow is shutting down"
}

// progress passes on an event of a run under way.
func (s *Server) progress(r *run, ev runevent.Event) {
	switch ev := ev.(type) {
	case runevent.Started:
		r.add("run_started", map[string]any{"run_id": r.id, "model": ev.Model})
	case runevent.TextDelta:
		r.add("message_delta", map[string]string{"content": ev.Text})
	case runevent.ReasoningDelta:
		r.add("reasoning_delta", map[string]string{"content": ev.Text})
	case runevent.TextReset:
		r.add("message_reset", map[string]string{"reason": "the model call is being retried; discard the text since the last tool call"})
	case runevent.ToolCall:
		r.add("tool_start", map[string]any{"call_id": ev.CallID, "name": ev.Name, "summary": ev.Summary})
	case runevent.ToolResult:
		r.add("tool_end", map[string]any{"call_id": ev.CallID, "name": ev.Name, "summary": ev.Summary,
			"result": ev.Result, "is_error": ev.IsError, "duration_ms": ev.Duration.Milliseconds()})
	case runevent.FilesPresented:
		s.presented(r, ev.Files)
	case runevent.TaskStarted:
		m := taskPayload(ev.Task)
		if ev.Task.Status == runevent.TaskPending {
			m["ahead"] = ev.Task.Ahead
		}
		r.add("task_started", m)
	case runevent.TaskProgress:
		m := taskPayload(ev.Task)
		m["line"] = ev.Task.Line
		r.add("task_progress", m)
	case runevent.TaskDone:
		m := taskPayload(ev.Task)
		m["result"], m["duration_ms"] = ev.Task.Result, ev.Task.Duration.Milliseconds()
		r.add("task_done", m)
	case runevent.Status, runevent.Clarification:
		// Not part of the API's stream: a research does not run through
		// it, and a clarification arrives as the run's message.
	default:
		s.log.Warn("api: an event the stream does not know", "event", runevent.Name(ev))
	}
}

// taskPayload is the JSON common to a task's events.
func taskPayload(t runevent.Task) map[string]any {
	return map[string]any{"task_id": t.ID, "description": t.Description, "subagent_type": t.Type, "status": t.Status}
}

// presented passes on files a tool presented.
func (s *Server) presented(r *run, files []runevent.File) {
	var out []map[string]any
	for _, f := range files {
		m := map[string]any{"name": f.Name, "path": f.Path, "size": f.Size}
		// The files route finds a file by its name in the outputs:
		// a url only for a file it serves (not one presented from a
		// folder inside them, which it would take for another).
		// By the name on disk: f.Name is cleaned for display.
		if name := path.Base(f.Path); plainName(name) && s.o.Files != nil {
			if got, err := s.o.Files(r.threadID, name); err == nil && got.Path == f.Path {
				m["url"] = "/api/threads/" + url.PathEscape(r.threadID) + "/files/" + url.PathEscape(name)
			}
		}
		out = append(out, m)
	}
	if len(out) > 0 {
		r.add("files", map[string]any{"files": out})
	}
}
