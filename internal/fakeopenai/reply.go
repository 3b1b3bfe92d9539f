package fakeopenai

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Turn is the fake's reply to one request: a streamed answer by default, an
// error response when Status is set.
type Turn struct {
	Text      string
	Reasoning string // sent as reasoning_content deltas before the text
	ToolCalls []ToolCall
	// FinishReason defaults to "tool_calls" when there are ToolCalls, else "stop".
	FinishReason string
	// Usage is reported in the usage chunk; nil means rough counts derived
	// from the request and reply sizes.
	Usage *Usage

	// Chunk is the size in bytes of the pieces text, reasoning and tool-call
	// arguments are cut into, one delta each, at rune boundaries. 0 means 7.
	// Negative sends each whole in one delta and writes the reply at once:
	// the mode for benchmarks.
	Chunk int
	// Interleave alternates the argument deltas of parallel tool calls.
	Interleave bool
	// OmitIndex leaves "index" out of tool-call deltas, as some providers do.
	OmitIndex bool

	// Status, when set, makes the reply an error response with this HTTP
	// status: Body if set (sent as is), else an OpenAI-style error for the status.
	Status     int
	Body       string
	RetryAfter string // the Retry-After header of the error response

	// CutAfter > 0 ends the response after that many data events (at most
	// the content events), with no finish_reason and no [DONE]: a cut
	// stream. Negative ends it right after the headers.
	CutAfter int
	// Abort, with CutAfter, drops the connection instead of ending the
	// response: half of the next event is sent, then the connection is
	// closed without the end of the chunked body, as when a proxy or the
	// network fails mid-stream. The client sees an unexpected EOF.
	Abort bool
	// StreamError, a JSON object, is sent as `data: {"error":<StreamError>}`
	// after the content, in place of the finish.
	StreamError string
	// Delay is waited before each data event; a client disconnect ends it.
	Delay time.Duration
	// Hold, when set, blocks the reply until it is closed or the client
	// goes away: before anything is sent (even headers), or, if HoldAfter
	// > 0, after that many data events.
	Hold      chan struct{}
	HoldAfter int
}

// Usage is the token accounting of a reply.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// reply answers req with t. It reports false if the client went away.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, req *Request, t *Turn, nth int) bool {
	ctx := r.Context()
	if t.Hold != nil && t.HoldAfter <= 0 && !s.pause(ctx, t.Hold, 0) {
		return false
	}
	if t.Status != 0 {
		writeTurnError(w, req, t)
		return true
	}
	if !req.Stream {
		writeCompletion(w, req, t, nth)
		return true
	}
	ev := buildEvents(req, t, nth)
	limit := len(ev.ends)
	switch {
	case t.CutAfter > 0:
		limit = min(t.CutAfter, ev.content)
	case t.CutAfter < 0:
		limit = 0
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if t.Chunk < 0 && t.Delay == 0 && t.Hold == nil {
		if limit > 0 {
			w.Write(ev.buf[:ev.ends[limit-1]])
		}
		if t.Abort {
			abort(w, ev, limit)
		}
		return true
	}
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return false
	}
	start := 0
	for i := range limit {
		if t.Hold != nil && i == t.HoldAfter && !s.pause(ctx, t.Hold, 0) {
			return false
		}
		if t.Delay > 0 && !s.pause(ctx, nil, t.Delay) {
			return false
		}
		if _, err := w.Write(ev.buf[start:ev.ends[i]]); err != nil {
			return false
		}
		if rc.Flush() != nil {
			return false
		}
		start = ev.ends[i]
	}
	if t.Abort {
		abort(w, ev, limit)
	}
	return true
}

// abort writes the first half of event n, if there is one, then drops the
// connection: the server closes it without ending the chunked body.
func abort(w http.ResponseWriter, ev *events, n int) {
	start := 0
	if n > 0 {
		start = ev.ends[n-1]
	}
	if n < len(ev.ends) {
		w.Write(ev.buf[start : start+(ev.ends[n]-start)/2])
	}
	http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}

// pause waits for hold to close or d to pass (whichever is set), and
// reports false if the client went away or the test ended first.
func (s *Server) pause(ctx context.Context, hold <-chan struct{}, d time.Duration) bool {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-hold:
	case <-timer:
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
	return true
}

func (t *Turn) finishReason() string {
	switch {
	case t.FinishReason != "":
		return t.FinishReason
	case len(t.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (t *Turn) usage(req *Request) Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content) + len(m.Reasoning) + 4
	}
	out := len(t.Text) + len(t.Reasoning)
	for _, c := range t.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	u := Usage{PromptTokens: in/4 + 1, CompletionTokens: out/4 + 1}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func callID(c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return "call_fake" + strconv.Itoa(i)
}

type apiError struct {
	Message, Type string
	Param, Code   string // empty: null
}

func (e apiError) MarshalJSON() ([]byte, error) {
	null := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return json.Marshal(struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}{e.Message, e.Type, null(e.Param), null(e.Code)})
}

func writeError(w http.ResponseWriter, status int, retryAfter string, e apiError) {
	body, _ := json.Marshal(struct {
		Error apiError `json:"error"`
	}{e})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

func modelNotFound(model string) apiError {
	return apiError{
		Message: "The model `" + model + "` does not exist or you do not have access to it.",
		Type:    "invalid_request_error",
		Code:    "model_not_found",
	}
}

func writeTurnError(w http.ResponseWriter, req *Request, t *Turn) {
	if t.Body != "" {
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		if strings.HasPrefix(strings.TrimSpace(t.Body), "{") {
			h.Set("Content-Type", "application/json")
		}
		if t.RetryAfter != "" {
			h.Set("Retry-After", t.RetryAfter)
		}
		w.WriteHeader(t.Status)
		w.Write([]byte(t.Body))
		return
	}
	var e apiError
	switch {
	case t.Status == http.StatusUnauthorized:
		e = apiError{Message: "Incorrect API key provided", Type: "invalid_request_error", Code: "invalid_api_key"}
	case t.Status == http.StatusNotFound:
		e = modelNotFound(req.Model)
	case t.Status == http.StatusTooManyRequests:
		e = apiError{Message: "Rate limit reached for requests", Type: "requests", Code: "rate_limit_exceeded"}
	case t.Status >= 500:
		e = apiError{Message: "The server had an error while processing your request. Sorry about that!", Type: "server_error"}
	default:
		e = apiError{Message: "fakeopenai: scripted error " + strconv.Itoa(t.Status), Type: "invalid_request_error"}
	}
	writeError(w, t.Status, t.RetryAfter, e)
}

// writeCompletion answers a request with "stream": false.
func writeCompletion(w http.ResponseWriter, req *Request, t *Turn, nth int) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := struct {
		Role      string  `json:"role"`
		Content   *string `json:"content"`
		Reasoning string  `json:"reasoning_content,omitempty"`
		ToolCalls []call  `json:"tool_calls,omitempty"`
	}{Role: "assistant", Reasoning: t.Reasoning}
	if t.Text != "" || len(t.ToolCalls) == 0 {
		msg.Content = &t.Text
	}
	for i, c := range t.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, call{ID: callID(c, i), Type: "function", Function: fn{c.Name, c.Arguments}})
	}
	type choice struct {
		Index        int    `json:"index"`
		Message      any    `json:"message"`
		Logprobs     any    `json:"logprobs"`
		FinishReason string `json:"finish_reason"`
	}
	body, _ := json.Marshal(struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		Created int64    `json:"created"`
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   Usage    `json:"usage"`
	}{"chatcmpl-fake" + strconv.Itoa(nth), "chat.completion", created, req.Model,
		[]choice{{Message: msg, FinishReason: t.finishReason()}}, t.usage(req)})
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}
