package api

import (
	"errors"
	"net/http"

	"github.com/deerflow/deerflow/scheduler"
)

// The schedule routes: a thread's scheduled tasks. Each run of one is a
// run of the thread (origin schedule), its answer stored in the thread's
// messages.
//
//	GET    /api/threads/{id}/schedules         the thread's tasks
//	POST   /api/threads/{id}/schedules         schedule one: {prompt, at|every|cron, timezone, description, user_id}
//	DELETE /api/threads/{id}/schedules/{sid}   cancel one
func (s *Server) scheduleRoutes() {
	s.mux.HandleFunc("GET /api/threads/{id}/schedules", s.listSchedules)
	s.mux.HandleFunc("POST /api/threads/{id}/schedules", s.createSchedule)
	s.mux.HandleFunc("DELETE /api/threads/{id}/schedules/{sid}", s.deleteSchedule)
}

// schedulerOn answers 503 when scheduled tasks are off.
func (s *Server) schedulerOn(w http.ResponseWriter) bool {
	if s.o.Schedules == nil {
		fail(w, http.StatusServiceUnavailable, "Scheduled tasks are off: set scheduler.enabled to true.")
		return false
	}
	return true
}

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	if !s.schedulerOn(w) {
		return
	}
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	out := []scheduler.TaskView{}
	for _, task := range s.o.Schedules.Tasks(t.ChatKey) {
		out = append(out, scheduler.View(task))
	}
	reply(w, http.StatusOK, out)
}

// scheduleBody is POST /api/threads/{id}/schedules' body.
type scheduleBody struct {
	Prompt      string `json:"prompt"`
	Description string `json:"description"`
	scheduler.Spec
	// UserID is whose long-term memory the runs have, as for a run.
	UserID string `json:"user_id"`
}

func (s *Server) createSchedule(w http.ResponseWriter, r *http.Request) {
	if !s.schedulerOn(w) {
		return
	}
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	var body scheduleBody
	if !decode(w, r, &body) {
		return
	}
	user, ok := runUser(t.ID, body.UserID)
	if !ok {
		fail(w, http.StatusBadRequest, "user_id must be at most 128 printable characters.")
		return
	}
	task, err := s.o.Schedules.Create(scheduler.NewTask{
		ChatKey: t.ChatKey, User: user, Prompt: body.Prompt, Description: body.Description, Spec: body.Spec,
	})
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	v := scheduler.View(task)
	reply(w, http.StatusCreated, map[string]string{"id": v.ID, "next_run": v.NextRun})
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	if !s.schedulerOn(w) {
		return
	}
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	_, err := s.o.Schedules.Cancel(t.ChatKey, r.PathValue("sid"))
	switch {
	case errors.Is(err, scheduler.ErrNotFound):
		fail(w, http.StatusNotFound, "The thread has no scheduled task "+r.PathValue("sid")+".")
	case err != nil:
		s.log.Error("api: cancelling a scheduled task", "thread", t.ID, "err", err)
		fail(w, http.StatusInternalServerError, "The task could not be cancelled; try again.")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}
