package lgwire

import (
	"encoding/json"
	"strings"

	"github.com/deerflow/deerflow/store"
)

// RunBody is the body of a run's creation, as LangGraph's SDKs send it.
// Input is {"messages":[…]} in LangChain ({type, content}) or OpenAI
// ({role, content}) shape; the last human message is the person's.
// command, checkpoint, interrupts and webhooks are not supported;
// on_completion is ignored (deerflow keeps every thread).
type RunBody struct {
	AssistantID       string          `json:"assistant_id"`
	Input             json.RawMessage `json:"input"`
	Command           json.RawMessage `json:"command"`
	Config            map[string]any  `json:"config"`
	Context           map[string]any  `json:"context"`
	Metadata          map[string]any  `json:"metadata"`
	StreamMode        json.RawMessage `json:"stream_mode"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	OnDisconnect      string          `json:"on_disconnect"` // continue (default) or cancel
	IfNotExists       string          `json:"if_not_exists"` // reject (default) or create
	OnCompletion      string          `json:"on_completion"`
	// deerflow's own: a configured model name (also context or
	// configurable model_name), and whose long-term memory the run has
	// (also context or configurable user_id).
	Model  string `json:"model"`
	UserID string `json:"user_id"`
	// Message is taken as the input when there is none.
	Message string `json:"message"`
}

// Setting is a string the client set in context or config.configurable.
func (b *RunBody) Setting(key string) string {
	if v, ok := b.Context[key].(string); ok && v != "" {
		return strings.TrimSpace(v)
	}
	conf, _ := b.Config["configurable"].(map[string]any)
	v, _ := conf[key].(string)
	return strings.TrimSpace(v)
}

// Select keeps the fields asked for of each thread; values are the full
// state (from values) when asked for.
func Select(list []Thread, fields []string, values func(threadID string) any) []map[string]any {
	out := make([]map[string]any, 0, len(list))
	for _, t := range list {
		var all map[string]any
		data, _ := json.Marshal(t)
		json.Unmarshal(data, &all)
		m := map[string]any{}
		for _, f := range fields {
			if v, ok := all[f]; ok {
				m[f] = v
			}
			if f == "values" {
				m[f] = values(t.ThreadID)
			}
		}
		out = append(out, m)
	}
	return out
}

// metaKey holds a thread's LangGraph metadata (a JSON object) in its
// record's Meta, so it goes with the thread.
const metaKey = "lg_metadata"

// ThreadMetadata is thread t's LangGraph metadata (never nil).
func ThreadMetadata(t *store.Thread) map[string]any {
	m := map[string]any{}
	json.Unmarshal([]byte(t.Meta[metaKey]), &m)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// SetThreadMetadata sets thread t's LangGraph metadata.
func SetThreadMetadata(t *store.Thread, m map[string]any) {
	data, _ := json.Marshal(m)
	if t.Meta == nil {
		t.Meta = map[string]string{}
	}
	t.Meta[metaKey] = string(data)
}

// ValidThreadID reports whether a client may name a thread id.
func ValidThreadID(id string) bool {
	return len(id) > 0 && len(id) <= 128 && !strings.ContainsFunc(id, func(c rune) bool {
		return !(c == '-' || c == '_' || c == '.' || c == ':' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	})
}
