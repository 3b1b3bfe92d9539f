package llm

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/deerflow/deerflow/llm/sse"
)

// Limits on what one answer may grow to; beyond them the provider is
// misbehaving and the call fails with KindBadOutput.
const (
	maxToolArgs  = 1 << 20 // bytes of arguments per tool call
	maxToolCalls = 512
	maxDetails   = 1 << 20 // bytes of reasoning_details kept for the round trip
)

// read yields the deltas of the stream, starting with the already decoded
// first, and finally the assembled Response.
func (k *call) read(ctx context.Context, st *sse.Reader, first *wireChunk, yield func(Chunk, error) bool) {
	a := answer{provider: k.provider, tools: toolAcc{idPrefix: callIDPrefix()}}
	ev := first
	for {
		more, err := a.add(ev, yield)
		if err != nil {
			yield(Chunk{}, k.partial(ctx, err, &a))
			return
		}
		if !more {
			return
		}
		if ctx.Err() != nil {
			yield(Chunk{}, k.ctxErr())
			return
		}
		if ev, err = nextChunk(st); err != nil {
			yield(Chunk{}, k.partial(ctx, err, &a))
			return
		}
		if ev == nil {
			break
		}
	}
	if a.finish == "" {
		// A cut connection and [DONE] both end the stream; only a
		// finish_reason tells a complete answer.
		yield(Chunk{}, k.partial(ctx, &Error{Kind: KindTruncated, Model: k.model, Err: errors.New("stream ended without a finish_reason")}, &a))
		return
	}
	yield(Chunk{Done: a.response()}, nil)
}

// nextChunk reads the next chunk of st; nil at the stream's end ([DONE]
// or EOF).
func nextChunk(st *sse.Reader) (*wireChunk, error) {
	for st.Next() {
		ev := st.Event()
		if string(ev.Data) == "[DONE]" {
			return nil, nil
		}
		if len(ev.Data) == 0 || ev.Type == "ping" {
			continue
		}
		return decodeEvent(ev)
	}
	if err := st.Err(); err != nil {
		return nil, err
	}
	return nil, nil
}

// partial classifies a failure after data arrived and attaches the text
// the caller has seen. A broken connection then means a cut answer, not
// an unreachable endpoint.
func (k *call) partial(ctx context.Context, err error, a *answer) error {
	_, e := k.fail(ctx, err)
	le, ok := e.(*Error)
	if !ok {
		return e
	}
	if le.Kind == KindUnreachable && ctx.Err() == nil {
		le.Kind = KindTruncated
	}
	if le.Model == "" {
		le.Model = k.model
	}
	le.Partial = a.text.String()
	return le
}

// answer accumulates a streamed response.
type answer struct {
	provider        string
	text, reasoning strings.Builder
	details         details
	tools           toolAcc
	finish          string
	usage           Usage
}

// add takes in one chunk, yielding its text and reasoning deltas. It
// reports false when the consumer stopped.
func (a *answer) add(ev *wireChunk, yield func(Chunk, error) bool) (bool, error) {
	if u := ev.Usage; u != nil {
		a.usage = u.usage()
	}
	for i := range ev.Choices {
		ch := &ev.Choices[i]
		if ch.Index != 0 {
			continue
		}
		d := &ch.Delta
		if err := a.details.add(d.ReasoningDetails); err != nil {
			return false, err
		}
		for _, r := range [2]string{d.Content.Thinking, d.reasoning()} {
			if r == "" {
				continue
			}
			a.reasoning.WriteString(r)
			if !yield(Chunk{Reasoning: r}, nil) {
				return false, nil
			}
		}
		// A refusal is what the model says instead of an answer.
		for _, s := range [2]string{d.Content.Text, d.Refusal} {
			if s == "" {
				continue
			}
			a.text.WriteString(s)
			if !yield(Chunk{Text: s}, nil) {
				return false, nil
			}
		}
		for j := range d.ToolCalls {
			if err := a.tools.add(&d.ToolCalls[j]); err != nil {
				return false, &Error{Kind: KindBadOutput, Err: err}
			}
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	if a.finish == "error" {
		// OpenRouter: the provider failed mid-answer.
		se := &streamError{apiError{openai.APIError{Message: "the model stopped with finish_reason \"error\"", Type: "server_error"}}}
		if ev.Error != nil {
			se.api = *ev.Error
		}
		return false, se
	}
	return true, nil
}

// response is the assembled answer.
func (a *answer) response() *Response {
	m := Message{
		Role:      RoleAssistant,
		Content:   a.text.String(),
		Reasoning: a.reasoning.String(),
		ToolCalls: a.tools.result(a.finish == "length"),
	}
	if len(a.details.parts) > 0 {
		b, _ := json.Marshal(map[string]any{"reasoning_details": a.details.parts})
		m.Extra = b
	}
	if m.Extra != nil || slices.ContainsFunc(m.ToolCalls, func(c ToolCall) bool { return c.Extra != nil }) {
		m.Provider = a.provider
	}
	return &Response{Message: m, FinishReason: a.finish, Usage: a.usage}
}

// details accumulates OpenRouter's reasoning_details. Streamed, one entry
// comes in pieces that share its index: their text, summary, data and
// signature are joined, and the other fields kept from the first piece.
type details struct {
	parts []reasoningPart
	size  int
}

func (d *details) add(parts []reasoningPart) error {
	for _, p := range parts {
		for _, v := range p {
			d.size += len(v)
		}
		if d.size > maxDetails {
			return &Error{Kind: KindBadOutput, Err: fmt.Errorf("reasoning_details exceed %d bytes", maxDetails)}
		}
		if n := len(d.parts); n > 0 && sameEntry(d.parts[n-1], p) {
			joinPart(d.parts[n-1], p)
			continue
		}
		d.parts = append(d.parts, p)
	}
	return nil
}

func sameEntry(prev, p reasoningPart) bool {
	idx, ok := p["index"]
	return ok && string(prev["index"]) == string(idx) && prev.str("type") == p.str("type")
}

func joinPart(into, p reasoningPart) {
	for k, v := range p {
		switch k {
		case "text", "summary", "data", "signature":
			if s := p.str(k); s != "" {
				joined, _ := json.Marshal(into.str(k) + s)
				into[k] = joined
			}
		default:
			if _, ok := into[k]; !ok || string(into[k]) == "null" {
				into[k] = v
			}
		}
	}
}

// toolAcc assembles streamed tool-call deltas. A delta continues the call
// with its index, else the call with its id; a delta with neither
// continues the last call, unless it names a function: then it starts a
// new one (Gemini sends whole calls without index or id). Two calls are
// never merged.
type toolAcc struct {
	calls []pendingCall
	last  int // position in calls of the previous delta's call, plus one
	// idPrefix starts the ids made for calls the provider sent without
	// one (Gemini); "" is "call_". The client makes it unique per
	// response: providers that check ids refuse a conversation in which
	// two calls share one, and "call_0" comes back every turn.
	idPrefix string
}

type pendingCall struct {
	index    int
	hasIndex bool
	id, name string
	args     []byte
	extra    json.RawMessage
}

func (a *toolAcc) add(d *wireToolDelta) error {
	p := a.find(d)
	if p == nil {
		return fmt.Errorf("more than %d tool calls", maxToolCalls)
	}
	if p.id == "" {
		p.id = d.ID
	}
	if p.name == "" {
		p.name = d.Function.Name
	}
	if len(d.ExtraContent) > 0 && string(d.ExtraContent) != "null" {
		p.extra = d.ExtraContent
	}
	if len(p.args)+len(d.Function.Arguments) > maxToolArgs {
		return fmt.Errorf("tool call %q: arguments exceed %d bytes", p.name, maxToolArgs)
	}
	p.args = append(p.args, d.Function.Arguments...)
	return nil
}

func (a *toolAcc) find(d *wireToolDelta) *pendingCall {
	for i := len(a.calls) - 1; i >= 0; i-- { // the latest call of a reused index
		c := &a.calls[i]
		byIndex := d.Index != nil && c.hasIndex && c.index == *d.Index && (d.ID == "" || c.id == "" || c.id == d.ID)
		byID := d.Index == nil && d.ID != "" && c.id == d.ID
		if byIndex || byID {
			a.last = i + 1
			return c
		}
	}
	if d.Index == nil && d.ID == "" && d.Function.Name == "" && a.last > 0 {
		return &a.calls[a.last-1]
	}
	if len(a.calls) >= maxToolCalls {
		return nil
	}
	p := pendingCall{}
	if d.Index != nil {
		p.index, p.hasIndex = *d.Index, true
	} else {
		for _, c := range a.calls {
			p.index = max(p.index, c.index+1)
		}
	}
	a.calls = append(a.calls, p)
	a.last = len(a.calls)
	return &a.calls[len(a.calls)-1]
}

// result returns the calls ordered by index. A call the provider sent
// without an id gets one, since its result must refer to it. When the
// answer was cut by the length limit (cut), the call still open and any
// whose arguments are not JSON are marked Truncated.
func (a *toolAcc) result(cut bool) []ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	open := a.last - 1
	order := make([]int, len(a.calls))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return a.calls[x].index - a.calls[y].index })
	out := make([]ToolCall, len(a.calls))
	for n, i := range order {
		p := a.calls[i]
		if p.id == "" {
			p.id = cmp.Or(a.idPrefix, "call_") + strconv.Itoa(p.index)
		}
		out[n] = ToolCall{ID: p.id, Name: p.name, Arguments: string(p.args)}
		if p.extra != nil {
			out[n].Extra = slices.Concat([]byte(`{"extra_content":`), p.extra, []byte("}"))
		}
		if cut && (i == open || (len(p.args) > 0 && !json.Valid(p.args))) {
			out[n].Truncated = true
		}
	}
	return out
}

// callIDPrefix is a prefix for the ids of one response's calls that came
// without any: "call_", eight random hex digits, "_".
func callIDPrefix() string {
	var b [4]byte
	rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:]) + "_"
}
