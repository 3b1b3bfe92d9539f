package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Limits on what one answer may grow to; beyond them the provider is
// misbehaving and the call fails with KindBadOutput.
const (
	maxToolArgs  = 1 << 20 // bytes of arguments per tool call
	maxToolCalls = 512
)

// read yields the deltas of st, starting with the already received ev,
// and finally the assembled Response.
func (k *call) read(ctx context.Context, st *openai.ChatCompletionStream, ev openai.ChatCompletionStreamResponse, yield func(Chunk, error) bool) {
	var a answer
	for {
		more, err := a.add(&ev, yield)
		if err != nil {
			yield(Chunk{}, &Error{Kind: KindBadOutput, Model: k.model, Err: err})
			return
		}
		if !more {
			return
		}
		if ctx.Err() != nil {
			yield(Chunk{}, k.ctxErr())
			return
		}
		ev, err = st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			yield(Chunk{}, k.midStream(ctx, err))
			return
		}
	}
	if a.finish == "" {
		// go-openai reports a cut connection and [DONE] alike as io.EOF;
		// only a finish_reason tells a complete answer.
		yield(Chunk{}, &Error{Kind: KindTruncated, Model: k.model, Err: errors.New("stream ended without a finish_reason")})
		return
	}
	yield(Chunk{Done: &Response{
		Message: Message{
			Role:      RoleAssistant,
			Content:   a.text.String(),
			Reasoning: a.reasoning.String(),
			ToolCalls: a.tools.result(),
		},
		FinishReason: a.finish,
		Usage:        a.usage,
	}}, nil)
}

// answer accumulates a streamed response.
type answer struct {
	text, reasoning strings.Builder
	tools           toolAcc
	finish          string
	usage           Usage
}

// add takes in one event, yielding its text and reasoning deltas. It
// reports false when the consumer stopped.
func (a *answer) add(ev *openai.ChatCompletionStreamResponse, yield func(Chunk, error) bool) (bool, error) {
	if u := ev.Usage; u != nil {
		a.usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	}
	for i := range ev.Choices {
		ch := &ev.Choices[i]
		if ch.Index != 0 {
			continue
		}
		d := &ch.Delta
		if d.ReasoningContent != "" {
			a.reasoning.WriteString(d.ReasoningContent)
			if !yield(Chunk{Reasoning: d.ReasoningContent}, nil) {
				return false, nil
			}
		}
		// A refusal is what the model says instead of an answer.
		for _, s := range [2]string{d.Content, d.Refusal} {
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
				return false, err
			}
		}
		if ch.FinishReason != "" {
			a.finish = string(ch.FinishReason)
		}
	}
	return true, nil
}

// midStream classifies a failure after data arrived. A broken connection
// then means a cut answer, not an unreachable endpoint.
func (k *call) midStream(ctx context.Context, err error) error {
	_, e := k.fail(ctx, err)
	if le, ok := e.(*Error); ok && le.Kind == KindUnreachable && ctx.Err() == nil {
		le.Kind = KindTruncated
	}
	return e
}

// toolAcc assembles streamed tool-call deltas. Deltas are merged by their
// index; for providers that omit it, a delta continues the previous call
// unless it carries a different id.
type toolAcc struct {
	calls []pendingCall
	last  int // position in calls of the previous delta's call, plus one
}

type pendingCall struct {
	index    int
	id, name string
	args     []byte
}

func (a *toolAcc) add(d *openai.ToolCall) error {
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
	if len(p.args)+len(d.Function.Arguments) > maxToolArgs {
		return fmt.Errorf("tool call %q: arguments exceed %d bytes", p.name, maxToolArgs)
	}
	p.args = append(p.args, d.Function.Arguments...)
	return nil
}

func (a *toolAcc) find(d *openai.ToolCall) *pendingCall {
	var index int
	if d.Index != nil {
		index = *d.Index
		for i := range a.calls {
			if a.calls[i].index == index {
				a.last = i + 1
				return &a.calls[i]
			}
		}
	} else {
		if a.last > 0 && (d.ID == "" || d.ID == a.calls[a.last-1].id) {
			return &a.calls[a.last-1]
		}
		for _, c := range a.calls {
			index = max(index, c.index+1)
		}
	}
	if len(a.calls) >= maxToolCalls {
		return nil
	}
	a.calls = append(a.calls, pendingCall{index: index})
	a.last = len(a.calls)
	return &a.calls[len(a.calls)-1]
}

// result returns the calls ordered by index. A call the provider sent
// without an id gets one, since its result must refer to it.
func (a *toolAcc) result() []ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	slices.SortStableFunc(a.calls, func(x, y pendingCall) int { return x.index - y.index })
	out := make([]ToolCall, len(a.calls))
	for i, p := range a.calls {
		if p.id == "" {
			p.id = "call_" + strconv.Itoa(p.index)
		}
		out[i] = ToolCall{ID: p.id, Name: p.name, Arguments: string(p.args)}
	}
	return out
}
