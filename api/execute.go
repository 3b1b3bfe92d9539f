package api

import (
	"context"
	"errors"
	"net/url"
	"path"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
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
		switch ev.Kind {
		case agent.EventStarted:
			r.add("run_started", map[string]any{"run_id": r.id, "model": ev.Model})
		case agent.EventTextDelta:
			r.add("message_delta", map[string]string{"content": ev.Text})
		case agent.EventReasoningDelta:
			r.add("reasoning_delta", map[string]string{"content": ev.Text})
		case agent.EventTextReset:
			r.add("message_reset", map[string]string{"reason": "the model call is being retried; discard the text since the last tool call"})
		case agent.EventToolStart:
			r.add("tool_start", toolJSON(ev.Tool, false))
		case agent.EventToolEnd:
			r.add("tool_end", toolJSON(ev.Tool, true))
		case agent.EventTool:
			s.custom(r, ev.Custom)
		case agent.EventAnswer:
			r.add("message", map[string]any{"role": "assistant", "content": ev.Text,
				"usage": map[string]int{"prompt_tokens": ev.Usage.PromptTokens, "completion_tokens": ev.Usage.CompletionTokens}})
			status, errText = statusSuccess, ""
		case agent.EventError:
			code := "run_failed"
			if errors.Is(ev.Err, agent.ErrThreadBusy) {
				code = "thread_busy"
			}
			r.add("error", apiError{Code: code, Message: ev.Text})
			status, errText = statusError, ev.Text
		case agent.EventStopped:
			status, errText = statusInterrupted, stopText(ev.Err, context.Cause(ctx))
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

func toolJSON(t *agent.ToolActivity, end bool) map[string]any {
	if t == nil {
		return map[string]any{}
	}
	m := map[string]any{"call_id": t.CallID, "name": t.Name, "summary": t.Summary}
	if end {
		m["result"], m["is_error"], m["duration_ms"] = t.Result, t.IsError, t.Duration.Milliseconds()
	}
	return m
}

// custom passes on what a tool reported: files and subagent tasks.
func (s *Server) custom(r *run, ev *tools.Event) {
	if ev == nil {
		return
	}
	switch ev.Kind {
	case tools.EventFiles:
		files, _ := ev.Data.([]tools.File)
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
	case tools.EventTaskStarted, tools.EventTaskProgress, tools.EventTaskDone:
		te, ok := ev.Data.(tools.TaskEvent)
		if !ok {
			return
		}
		m := map[string]any{"task_id": te.ID, "description": te.Description, "subagent_type": te.Type, "status": te.Status}
		switch ev.Kind {
		case tools.EventTaskStarted:
			if te.Status == tools.TaskPending {
				m["ahead"] = te.Ahead
			}
		case tools.EventTaskProgress:
			m["line"] = te.Line
		case tools.EventTaskDone:
			m["result"], m["duration_ms"] = te.Result, te.Duration.Milliseconds()
		}
		r.add(ev.Kind, m)
	}
}
