package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// createRunReq is the body of POST /runs. Input is the person's message:
// a string, or {"messages":[{"role":"user","content":"…"}]} (the last user
// message counts), or {"content"|"message"|"text":"…"}; a top-level
// "message" string is taken when there is no input.
type createRunReq struct {
	Input             json.RawMessage `json:"input"`
	Message           string          `json:"message"` // accepted instead of input
	MultitaskStrategy string          `json:"multitask_strategy"`
	OnDisconnect      string          `json:"on_disconnect"` // "continue" (default) or "cancel"
	Model             string          `json:"model"`
	// UserID names the person the run is for (their long-term memory,
	// shared by their threads); empty: the thread's own memory.
	UserID string `json:"user_id"`
	// Agent names the agent that answers (GET /api/agents); AssistantID,
	// LangGraph's name for it, is taken too. Empty: the built-in agent.
	Agent       string `json:"agent"`
	AssistantID string `json:"assistant_id"`
}

// inputText reads the run's message from raw.
func inputText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("input is required: the message to run, as a string or {\"messages\":[{\"role\":\"user\",\"content\":\"…\"}]}")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var obj struct {
		Content  *string `json:"content"`
		Message  *string `json:"message"`
		Text     *string `json:"text"`
		Messages []struct {
			Role    string          `json:"role"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", errors.New("input must be a string or an object with messages")
	}
	for _, v := range []*string{obj.Content, obj.Message, obj.Text} {
		if v != nil {
			return *v, nil
		}
	}
	for i := len(obj.Messages) - 1; i >= 0; i-- {
		m := obj.Messages[i]
		if m.Role != "user" && m.Role != "human" && m.Type != "human" {
			continue
		}
		if json.Unmarshal(m.Content, &s) == nil {
			return s, nil
		}
		// Content parts: [{"type":"text","text":"…"}].
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			var sb strings.Builder
			for _, p := range parts {
				if p.Type == "text" {
					sb.WriteString(p.Text)
				}
			}
			return sb.String(), nil
		}
		return "", errors.New("a message's content must be a string or a list of text parts")
	}
	return "", errors.New("input has no user message")
}

// input returns the run's message from req, or answers why there is none
// (or it is too long) and reports false.
func (s *Server) input(w http.ResponseWriter, req *createRunReq) (string, bool) {
	if len(req.Input) == 0 && req.Message != "" {
		req.Input, _ = json.Marshal(req.Message) // {"message":"…"} without input
	}
	text, err := inputText(req.Input)
	if err == nil && strings.TrimSpace(text) == "" {
		err = errors.New("the input message is empty")
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "bad_input", err.Error()+".")
		return "", false
	}
	if n := len([]rune(text)); n > s.o.MaxInput {
		fail(w, http.StatusRequestEntityTooLarge, "input_too_large", fmt.Sprintf("The input message has %d characters; the limit is %d.", n, s.o.MaxInput))
		return "", false
	}
	return text, true
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
