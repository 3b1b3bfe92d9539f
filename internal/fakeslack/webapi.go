package fakeslack

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// req is one Web API request being handled (under s.mu).
type req struct {
	form   map[string]string
	detail string   // extra error message (response_metadata.messages)
	after  []func() // run after the response was written, without s.mu
}

func (q *req) get(k string) string { return q.form[k] }

type handler func(s *Server, q *req) (resp map[string]any, slackErr string)

var handlers = map[string]handler{
	"auth.test":                             (*Server).authTest,
	"apps.connections.open":                 (*Server).connectionsOpen,
	"chat.postMessage":                      (*Server).postMessage,
	"chat.update":                           (*Server).update,
	"chat.delete":                           (*Server).deleteMessage,
	"chat.postEphemeral":                    (*Server).postEphemeral,
	"reactions.add":                         (*Server).reactionsAdd,
	"reactions.remove":                      (*Server).reactionsRemove,
	"assistant.threads.setStatus":           (*Server).setStatus,
	"files.getUploadURLExternal":            (*Server).getUploadURL,
	"files.completeUploadExternal":          (*Server).completeUpload,
	"files.info":                            (*Server).filesInfo,
	"conversations.info":                    (*Server).conversationsInfo,
	"assistant.threads.setTitle":            okHandler,
	"assistant.threads.setSuggestedPrompts": okHandler,
}

func okHandler(*Server, *req) (map[string]any, string) { return map[string]any{"ok": true}, "" }

// parseForm reads form-encoded, multipart or JSON bodies (plus the query string).
func parseForm(r *http.Request) (map[string]string, error) {
	form := map[string]string{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				return nil, err
			}
			for k, v := range m {
				if str, ok := v.(string); ok {
					form[k] = str
				} else {
					b, _ := json.Marshal(v)
					form[k] = string(b)
				}
			}
		}
	case "multipart/form-data":
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			return nil, err
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
	}
	for k, v := range r.Form {
		if _, ok := form[k]; !ok && len(v) > 0 {
			form[k] = v[0]
		}
	}
	return form, nil
}

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	form, perr := parseForm(r)
	if s.hold(method, r) {
		return
	}
	token := bearer(r)
	if token == "" && form != nil {
		token = form["token"]
	}
	q := &req{form: form}
	status, retryAfter := http.StatusOK, 0
	var resp map[string]any
	slackErr := ""

	s.mu.Lock()
	if slackErr = s.refusal(method, token, perr, q); slackErr == "" {
		if f, failing := s.takeFailure(method); failing {
			slackErr, status, retryAfter = f.answer()
		} else {
			resp, slackErr = handlers[method](s, q)
		}
	}
	if slackErr == "missing_scope" {
		resp = s.missingScope(s.scopeFor(method, q))
	} else if slackErr != "" {
		resp = map[string]any{"ok": false, "error": slackErr}
		if q.detail != "" {
			resp["response_metadata"] = map[string]any{"messages": []string{q.detail}}
			resp["errors"] = []string{q.detail}
		}
		q.after = nil
	}
	s.calls = append(s.calls, Call{Method: method, Form: maps.Clone(form), Status: status, Error: slackErr, Time: time.Now()})
	s.bump()
	s.mu.Unlock()

	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	writeJSON(w, status, resp)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	for _, f := range q.after {
		f()
	}
}

// refusal is the error Slack answers a call with before looking at what
// it asks ("" when it goes ahead): bad form, unknown method, wrong or
// missing token, missing scope; s.mu must be held.
func (s *Server) refusal(method, token string, perr error, q *req) string {
	switch {
	case perr != nil:
		return "invalid_form_data"
	case handlers[method] == nil:
		return "unknown_method"
	case token == "":
		return "not_authed"
	case method == "apps.connections.open" && token == s.BotToken:
		return "not_allowed_token_type"
	case method == "apps.connections.open" && token != s.AppToken,
		method != "apps.connections.open" && token != s.BotToken:
		return "invalid_auth"
	case !s.granted(s.scopeFor(method, q)):
		return "missing_scope"
	}
	return ""
}

// answer is the error, HTTP status and Retry-After of an injected failure.
func (f failure) answer() (slackErr string, status, retryAfter int) {
	slackErr, status = f.err, http.StatusOK
	if f.status != 0 {
		status = f.status
	}
	if status == http.StatusTooManyRequests {
		retryAfter = f.retryAfter
		if slackErr == "" {
			slackErr = "ratelimited"
		}
	}
	if slackErr == "" {
		slackErr = "internal_error"
	}
	return slackErr, status, retryAfter
}

// fail records a detailed error message for the response and returns code.
func (q *req) fail(code, detail string) (map[string]any, string) {
	q.detail = detail
	return nil, code
}

func (s *Server) authTest(*req) (map[string]any, string) {
	return map[string]any{"ok": true, "url": "https://test.slack.com/", "team": "Test", "user": "deerflow",
		"team_id": s.TeamID, "user_id": s.BotUserID, "bot_id": s.BotID, "is_enterprise_install": false}, ""
}

func (s *Server) connectionsOpen(*req) (map[string]any, string) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	ticket := hex.EncodeToString(b)
	s.tickets[ticket] = false
	return map[string]any{"ok": true, "url": "ws://" + strings.TrimPrefix(s.URL, "http://") + "/link/?ticket=" + ticket}, ""
}

func (s *Server) conversationsInfo(q *req) (map[string]any, string) {
	ch := q.get("channel")
	typ, ok := s.channels[ch]
	if !ok {
		return nil, "channel_not_found"
	}
	return map[string]any{"ok": true, "channel": map[string]any{"id": ch, "name": strings.ToLower(ch),
		"is_channel": typ == "channel", "is_group": typ == "group", "is_im": typ == "im", "is_mpim": typ == "mpim"}}, ""
}

func (s *Server) setStatus(q *req) (map[string]any, string) {
	ch, thread := q.get("channel_id"), q.get("thread_ts")
	if ch == "" || thread == "" {
		return nil, "invalid_arguments"
	}
	if _, ok := s.channels[ch]; !ok {
		return nil, "channel_not_found"
	}
	s.statuses[ch+"/"+thread] = q.get("status")
	return map[string]any{"ok": true}, ""
}

func (s *Server) reactionTarget(q *req) (*message, string) {
	ch, ts := q.get("channel"), q.get("timestamp")
	switch {
	case q.get("name") == "":
		return nil, "invalid_name"
	case ch == "" || ts == "":
		return nil, "no_item_specified"
	}
	if _, ok := s.channels[ch]; !ok {
		return nil, "channel_not_found"
	}
	m := s.msgs[ch+"/"+ts]
	if m == nil {
		return nil, "message_not_found"
	}
	return m, ""
}

func (s *Server) reactionsAdd(q *req) (map[string]any, string) {
	m, e := s.reactionTarget(q)
	if e != "" {
		return nil, e
	}
	name := q.get("name")
	for _, r := range m.reactions {
		if r == name {
			return nil, "already_reacted"
		}
	}
	m.reactions = append(m.reactions, name)
	return map[string]any{"ok": true}, ""
}

func (s *Server) reactionsRemove(q *req) (map[string]any, string) {
	m, e := s.reactionTarget(q)
	if e != "" {
		return nil, e
	}
	for i, r := range m.reactions {
		if r == q.get("name") {
			m.reactions = append(m.reactions[:i], m.reactions[i+1:]...)
			return map[string]any{"ok": true}, ""
		}
	}
	return nil, "no_reaction"
}
