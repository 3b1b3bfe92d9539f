package lgwire

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/event"
)

// Frame is one stream event: its SSE event name and JSON data.
type Frame struct {
	Event string
	Data  any
}

// The graph's node names, as DeerFlow's lead agent (a LangChain agent)
// reports them.
const (
	nodeModel = "model"
	nodeTools = "tools"
)

// Translator turns a run's typed events, in journal order, into LangGraph
// stream frames for the modes asked. It keeps the run's current model turn
// (its text, reasoning and tool calls) to build message chunks and
// updates. One Translator follows one stream; it is not safe for
// concurrent use.
type Translator struct {
	RunID, ThreadID string
	Modes           Modes
	// Values returns the thread's state now (for values frames); nil
	// sends none. Input is the run's message.
	Values func() map[string]any
	Input  string
	// FileURL is where a presented file can be fetched ("" when it
	// cannot); nil: no urls.
	FileURL func(path string) string

	began     bool // the metadata frame went out
	turn      int  // the assistant message being built, from 0
	text      strings.Builder
	reasoning strings.Builder
	calls     []ToolCall
	inTools   bool            // tool results of the turn arrived: the next model output is a new turn
	sentMeta  map[string]bool // messages mode: message ids whose metadata was sent
	steps     map[string]int  // subagent task id → progress lines so far
}

// Frames returns the frames for ev, in the order to send them.
// The first frame is always the metadata: from Began, or before the first
// event of a stream that starts later (resumed, or a run cancelled before
// it began).
func (t *Translator) Frames(ev event.Event) []Frame {
	var out []Frame
	if !t.began {
		t.began = true
		out = append(out, Frame{"metadata", map[string]any{"run_id": t.RunID, "thread_id": t.ThreadID, "attempt": 1}})
	}
	switch ev := ev.(type) {
	case event.Began:
	case event.Started:
		out = t.startValues(out)
	case event.TextDelta, event.ReasoningDelta:
		out = t.nextTurn(out)
		out = t.delta(out, ev)
	case event.TextReset:
		t.text.Reset()
		t.reasoning.Reset()
		out = t.custom(out, map[string]any{"type": "llm_retry", "message": ""})
	case event.ToolCall:
		out = t.nextTurn(out)
		out = t.toolCall(out, ev)
	case event.ToolResult:
		out = t.toolResult(out, ev)
	case event.Answer:
		out = t.nextTurn(out)
		out = t.answer(out, ev)
	case event.FilesPresented, event.Clarification, event.Status,
		event.TaskStarted, event.TaskProgress, event.TaskDone, event.RolledBack:
		out = t.customEvent(out, ev)
	case event.Todos:
		out = t.todosEvent(out, ev)
	case event.Error:
		out = append(out, Frame{"error", map[string]any{"error": errorName(ev.Err), "message": ev.Text}})
	case event.Ended:
		out = t.values(out)
		// LangGraph's end carries nothing; deerflow's says how the run
		// ended, for a client that cannot ask any more (a shutdown).
		end := map[string]any{"run_id": t.RunID, "status": ev.Status}
		if ev.Error != "" {
			end["error"] = ev.Error
		}
		out = append(out, Frame{"end", end})
	case event.Stopped:
		// The end frame says how the run stopped.
	}
	return out
}

// errorName is an error event's error: the kind, as LangGraph names an
// exception's class.
func errorName(err error) string {
	var named interface{ Name() string }
	if errors.As(err, &named) {
		return named.Name()
	}
	return "RunError"
}

func (t *Translator) values(out []Frame) []Frame {
	if t.Modes[ModeValues] && t.Values != nil {
		out = append(out, Frame{"values", t.Values()})
	}
	return out
}

// startValues is the state as the run starts: with the run's message,
// which its begin commit may still be storing.
func (t *Translator) startValues(out []Frame) []Frame {
	if !t.Modes[ModeValues] || t.Values == nil {
		return out
	}
	v := t.Values()
	msgs, _ := v["messages"].([]Message)
	if !slices.ContainsFunc(msgs, func(m Message) bool { return m.ID == HumanID(t.RunID) }) {
		v["messages"] = append(msgs, newMessage("human", t.Input, HumanID(t.RunID)))
	}
	return append(out, Frame{"values", v})
}

func (t *Translator) custom(out []Frame, v any) []Frame {
	if t.Modes[ModeCustom] {
		out = append(out, Frame{"custom", v})
	}
	return out
}

// nextTurn starts a new assistant message when the last one's tool
// results are in: the state has moved on a step.
func (t *Translator) nextTurn(out []Frame) []Frame {
	if !t.inTools {
		return out
	}
	t.inTools = false
	t.turn++
	t.text.Reset()
	t.reasoning.Reset()
	t.calls = nil
	return t.values(out)
}

// message is the current turn's assistant message so far.
func (t *Translator) message() Message {
	m := newMessage("ai", t.text.String(), AIID(t.RunID, t.turn))
	m.ToolCalls = append([]ToolCall{}, t.calls...)
	if t.reasoning.Len() > 0 {
		m.AdditionalKwargs["reasoning_content"] = t.reasoning.String()
	}
	return m
}

// meta is a message chunk's metadata.
func (t *Translator) meta(node string) map[string]any {
	return map[string]any{"run_id": t.RunID, "thread_id": t.ThreadID, "langgraph_node": node,
		"langgraph_step": t.turn + 1, "langgraph_path": []string{"__pregel_pull", node}}
}

// chunk sends a message chunk (messages-tuple), the message so far
// (messages) and a model stream event (events).
func (t *Translator) chunk(out []Frame, c Message, node string) []Frame {
	if t.Modes[ModeMessagesTuple] {
		out = append(out, Frame{"messages", []any{c, t.meta(node)}})
	}
	if t.Modes[ModeMessages] {
		whole := t.message()
		if c.Type == "tool" {
			whole = c
		}
		if t.sentMeta == nil {
			t.sentMeta = map[string]bool{}
		}
		if !t.sentMeta[whole.ID] {
			t.sentMeta[whole.ID] = true
			out = append(out, Frame{"messages/metadata", map[string]any{whole.ID: map[string]any{"metadata": t.meta(node)}}})
		}
		out = append(out, Frame{"messages/partial", []Message{whole}})
	}
	if t.Modes[ModeEvents] && c.Type == "AIMessageChunk" {
		out = append(out, Frame{"events", map[string]any{"event": "on_chat_model_stream", "name": node,
			"run_id": t.RunID, "tags": []string{}, "metadata": t.meta(node), "data": map[string]any{"chunk": c}}})
	}
	return out
}

func (t *Translator) delta(out []Frame, ev event.Event) []Frame {
	c := newMessage("AIMessageChunk", "", AIID(t.RunID, t.turn))
	switch ev := ev.(type) {
	case event.TextDelta:
		t.text.WriteString(ev.Text)
		c.Content = ev.Text
	case event.ReasoningDelta:
		t.reasoning.WriteString(ev.Text)
		c.AdditionalKwargs["reasoning_content"] = ev.Text
	}
	if !t.Modes.messageChunks() && !t.Modes[ModeEvents] {
		return out
	}
	return t.chunk(out, c, nodeModel)
}

func (t *Translator) toolCall(out []Frame, ev event.ToolCall) []Frame {
	t.calls = append(t.calls, ToolCall{ID: ev.CallID, Name: ev.Name, Args: json.RawMessage(`{}`), Type: "tool_call"})
	c := newMessage("AIMessageChunk", "", AIID(t.RunID, t.turn))
	c.ToolCallChunks = []ToolCallChunk{{ID: ev.CallID, Name: ev.Name, Args: "", Index: len(t.calls) - 1, Type: "tool_call_chunk"}}
	return t.chunk(out, c, nodeModel)
}

func (t *Translator) toolResult(out []Frame, ev event.ToolResult) []Frame {
	if !t.inTools {
		t.inTools = true
		if t.Modes[ModeUpdates] {
			out = append(out, Frame{"updates", map[string]any{nodeModel: map[string]any{"messages": []Message{t.message()}}}})
		}
		if t.Modes[ModeMessages] {
			out = append(out, Frame{"messages/complete", []Message{t.message()}})
		}
	}
	m := toolMessage(t.RunID, ev.CallID, ev.Name, ev.Result, ev.IsError)
	out = t.chunk(out, m, nodeTools)
	if t.Modes[ModeUpdates] {
		out = append(out, Frame{"updates", map[string]any{nodeTools: map[string]any{"messages": []Message{m}}}})
	}
	return out
}

func (t *Translator) answer(out []Frame, ev event.Answer) []Frame {
	u := &Usage{Input: ev.Usage.PromptTokens, Output: ev.Usage.CompletionTokens, Total: ev.Usage.PromptTokens + ev.Usage.CompletionTokens}
	if t.text.Len() == 0 && ev.Text != "" { // not streamed (or reset): the whole answer in one chunk
		t.text.WriteString(ev.Text)
		c := newMessage("AIMessageChunk", ev.Text, AIID(t.RunID, t.turn))
		out = t.chunk(out, c, nodeModel)
	}
	c := newMessage("AIMessageChunk", "", AIID(t.RunID, t.turn))
	c.ResponseMetadata["finish_reason"] = "stop"
	c.UsageMetadata = u
	if t.Modes[ModeMessagesTuple] {
		out = append(out, Frame{"messages", []any{c, t.meta(nodeModel)}})
	}
	final := t.message()
	final.ResponseMetadata["finish_reason"] = "stop"
	final.UsageMetadata = u
	if t.Modes[ModeMessages] {
		out = append(out, Frame{"messages/complete", []Message{final}})
	}
	if t.Modes[ModeUpdates] {
		out = append(out, Frame{"updates", map[string]any{nodeModel: map[string]any{"messages": []Message{final}}}})
	}
	return out
}
