package lgwire

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// Assistant is an assistant (an agent) as LangGraph shows it.
type Assistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Created     time.Time      `json:"created_at"`
	Updated     time.Time      `json:"updated_at"`
	Version     int            `json:"version"`
}

// LeadAgent is the built-in agent's assistant id, and every assistant's
// graph.
const LeadAgent = "lead_agent"

// epoch is when the assistants were "created": they are configuration.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewAssistant is the assistant id; a named agent's config names it as
// DeerFlow's UI does (configurable agent_name).
func NewAssistant(id, description string) Assistant {
	cfg := map[string]any{"configurable": map[string]any{}}
	if id != LeadAgent {
		cfg["configurable"] = map[string]any{"agent_name": id}
	}
	return Assistant{AssistantID: id, GraphID: LeadAgent, Name: id, Description: description,
		Config: cfg, Context: map[string]any{}, Metadata: map[string]any{"created_by": "system"},
		Created: epoch, Updated: epoch, Version: 1}
}

// Graph is the lead agent's graph: model and tools in a loop.
func Graph() map[string]any {
	node := func(id string) map[string]any { return map[string]any{"id": id, "type": "runnable", "data": id} }
	edge := func(from, to string, cond bool) map[string]any {
		return map[string]any{"source": from, "target": to, "conditional": cond}
	}
	return map[string]any{
		"nodes": []any{node("__start__"), node(nodeModel), node(nodeTools), node("__end__")},
		"edges": []any{edge("__start__", nodeModel, false), edge(nodeModel, nodeTools, true),
			edge(nodeModel, "__end__", true), edge(nodeTools, nodeModel, false)},
	}
}

// Schemas are the graph's JSON schemas: its state (messages, title,
// artifacts) as input, output and state.
func Schemas(graphID string) map[string]any {
	state := map[string]any{"title": "ThreadState", "type": "object", "properties": map[string]any{
		"messages":  map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		"title":     map[string]any{"type": "string"},
		"artifacts": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"todos":     map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
	}}
	obj := func(title string) map[string]any {
		return map[string]any{"title": title, "type": "object", "properties": map[string]any{}}
	}
	return map[string]any{"graph_id": graphID, "input_schema": state, "output_schema": state,
		"state_schema": state, "config_schema": obj("Configurable"), "context_schema": obj("Context")}
}

// Thread is a thread as LangGraph shows it.
type Thread struct {
	ThreadID   string         `json:"thread_id"`
	Created    time.Time      `json:"created_at"`
	Updated    time.Time      `json:"updated_at"`
	Metadata   map[string]any `json:"metadata"`
	Status     string         `json:"status"` // idle, busy, interrupted, error
	Values     any            `json:"values"`
	Interrupts map[string]any `json:"interrupts"`
}

// State is a thread's state at a checkpoint (LangGraph's ThreadState).
type State struct {
	Values     any            `json:"values"`
	Next       []string       `json:"next"`
	Tasks      []any          `json:"tasks"`
	Checkpoint map[string]any `json:"checkpoint"`
	Metadata   map[string]any `json:"metadata"`
	Created    time.Time      `json:"created_at"`
	Parent     any            `json:"parent_checkpoint"`
	Interrupts []any          `json:"interrupts"`
}

// Checkpoint names checkpoint id of a thread.
func Checkpoint(threadID, id string) map[string]any {
	return map[string]any{"thread_id": threadID, "checkpoint_ns": "", "checkpoint_id": id}
}

// Run is a run as LangGraph shows it.
type Run struct {
	RunID       string         `json:"run_id"`
	ThreadID    string         `json:"thread_id"`
	AssistantID string         `json:"assistant_id"`
	Created     time.Time      `json:"created_at"`
	Updated     time.Time      `json:"updated_at"`
	Status      string         `json:"status"` // pending, running, success, error, interrupted
	Error       string         `json:"error,omitempty"`
	Metadata    map[string]any `json:"metadata"`
	Strategy    string         `json:"multitask_strategy"`
	Kwargs      map[string]any `json:"kwargs"`
}

// MetaMatch reports whether have holds every key of want with an equal
// (JSON) value.
func MetaMatch(have, want map[string]any) bool {
	for k, v := range want {
		a, _ := json.Marshal(have[k])
		b, _ := json.Marshal(v)
		if _, ok := have[k]; !ok || string(a) != string(b) {
			return false
		}
	}
	return true
}

// SortThreads sorts list by thread_id, created_at, updated_at (the
// default) or status, descending unless order is asc.
func SortThreads(list []Thread, by, order string) {
	less := func(a, b Thread) bool { return a.Updated.Before(b.Updated) }
	switch by {
	case "thread_id":
		less = func(a, b Thread) bool { return a.ThreadID < b.ThreadID }
	case "created_at":
		less = func(a, b Thread) bool { return a.Created.Before(b.Created) }
	case "status":
		less = func(a, b Thread) bool { return a.Status < b.Status }
	}
	sort.SliceStable(list, func(i, j int) bool {
		if strings.EqualFold(order, "asc") {
			return less(list[i], list[j])
		}
		return less(list[j], list[i])
	})
}

// Page is list[offset:offset+limit] (limit 0: 10).
func Page[T any](list []T, offset, limit int) []T {
	if limit <= 0 {
		limit = 10
	}
	offset = min(max(offset, 0), len(list))
	return list[offset:min(offset+limit, len(list))]
}
