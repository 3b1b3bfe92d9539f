package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/runner"
)

// input returns the run's message, or answers why there is none (or it is
// too long) and reports false.
func (s *Server) input(w http.ResponseWriter, b *lgwire.RunBody) (string, bool) {
	if len(b.Input) == 0 && len(b.Command) > 0 && string(b.Command) != "null" {
		fail(w, http.StatusUnprocessableEntity, "command (resuming an interrupt) is not supported: send input with a message.")
		return "", false
	}
	if len(b.Input) == 0 && b.Message != "" {
		b.Input, _ = json.Marshal(map[string]string{"message": b.Message})
	}
	text, err := lgwire.InputText(b.Input)
	if err == nil && strings.TrimSpace(text) == "" {
		err = fmt.Errorf("the input message is empty")
	}
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, err.Error()+".")
		return "", false
	}
	if n := len([]rune(text)); n > s.o.MaxInput {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("The input message has %d characters; the limit is %d.", n, s.o.MaxInput))
		return "", false
	}
	return text, true
}

// request checks a run's body and makes it the runner's request, without
// its thread yet; false when the client was told what is wrong.
func (s *Server) request(w http.ResponseWriter, b *lgwire.RunBody, modes lgwire.Modes) (runner.Request, bool) {
	text, ok := s.input(w, b)
	if !ok {
		return runner.Request{}, false
	}
	strategy, ok := runner.ParseStrategy(strings.ToLower(strings.TrimSpace(b.MultitaskStrategy)))
	if !ok {
		fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("multitask_strategy %q is not one of reject, enqueue, interrupt, rollback.", b.MultitaskStrategy))
		return runner.Request{}, false
	}
	onDisconnect := strings.ToLower(strings.TrimSpace(b.OnDisconnect))
	if onDisconnect != "" && onDisconnect != "continue" && onDisconnect != "cancel" {
		fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("on_disconnect %q is not continue or cancel.", b.OnDisconnect))
		return runner.Request{}, false
	}
	model := strings.TrimSpace(b.Model)
	if model == "" {
		model = b.Setting("model_name")
	}
	if model != "" {
		if _, ok := s.o.Agent.Model(model); !ok {
			fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("There is no model called %q.", model))
			return runner.Request{}, false
		}
	}
	if u := b.UserID; u == "" {
		b.UserID = b.Setting("user_id")
	}
	if _, ok := runUser("", b.UserID); !ok {
		fail(w, http.StatusUnprocessableEntity, "user_id must be at most 128 printable characters.")
		return runner.Request{}, false
	}
	agentName, ok := s.agentOf(w, b)
	if !ok {
		return runner.Request{}, false
	}
	data, _ := json.Marshal(runData{CancelOnDisconnect: onDisconnect == "cancel", Agent: agentName})
	return runner.Request{Origin: runner.OriginAPI, Text: text, Model: model, Strategy: strategy, Data: data}, true
}

// runUser is whose memory a run has: "api:<user_id>", shared by that
// user's threads, or without a user_id its thread's own, never one pool
// shared by everyone who uses the API. (Not "api:<thread id>": a user_id
// could spell that.) ok is false for a user_id too long or unprintable.
func runUser(threadID, userID string) (user string, ok bool) {
	u := strings.TrimSpace(userID)
	if u == "" {
		return "api-thread:" + threadID, true
	}
	if len(u) > 128 || strings.ContainsFunc(u, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return "", false
	}
	return "api:" + u, true
}
