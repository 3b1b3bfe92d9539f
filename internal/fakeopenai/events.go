package fakeopenai

import (
	"strconv"
	"unicode/utf8"
)

const created = 1700000000

// events is a streamed reply: the bytes of all its SSE events, where each
// ends, and how many of them are content (the rest being finish, usage and
// [DONE], or an error event).
type events struct {
	buf     []byte
	ends    []int
	content int

	head      string // of every chunk, up to the choices
	prefix    string // of every chunk, up to the delta
	usageNull bool   // with include_usage every chunk but the last has "usage":null
}

// buildEvents renders t as the real API streams it.
func buildEvents(req *Request, t *Turn, nth int) *events {
	e := &events{
		buf:       make([]byte, 0, 512+3*(len(t.Text)+len(t.Reasoning))),
		usageNull: req.IncludeUsage,
		head: `data: {"id":"chatcmpl-fake` + strconv.Itoa(nth) + `","object":"chat.completion.chunk","created":` +
			strconv.Itoa(created) + `,"model":` + string(appendString(nil, req.Model)) +
			`,"system_fingerprint":"fp_fake","choices":[`,
	}
	e.prefix = e.head + `{"index":0,"delta":`
	n := t.Chunk
	if n == 0 {
		n = 7
	}
	e.chunk(`{"role":"assistant","content":"","refusal":null}`, "", "")
	for _, p := range pieces(t.Reasoning, n) {
		e.chunk(`{"content":null,"reasoning_content":`, p, "}")
	}
	for _, p := range pieces(t.Text, n) {
		e.chunk(`{"content":`, p, "}")
	}
	e.toolCalls(t, n)
	e.content = len(e.ends)

	if t.StreamError != "" {
		e.buf = append(e.buf, `data: {"error":`...)
		e.buf = append(e.buf, t.StreamError...)
		e.end("}\n\n")
		return e
	}
	e.finish(t.finishReason())
	if req.IncludeUsage {
		u := t.usage(req)
		e.buf = append(e.buf, e.head...)
		e.buf = append(e.buf, `],"usage":{"prompt_tokens":`...)
		e.buf = strconv.AppendInt(e.buf, int64(u.PromptTokens), 10)
		e.buf = append(e.buf, `,"completion_tokens":`...)
		e.buf = strconv.AppendInt(e.buf, int64(u.CompletionTokens), 10)
		e.buf = append(e.buf, `,"total_tokens":`...)
		e.buf = strconv.AppendInt(e.buf, int64(u.TotalTokens), 10)
		e.end("}}\n\n")
	}
	e.buf = append(e.buf, "data: [DONE]"...)
	e.end("\n\n")
	return e
}

// chunk appends a chunk event whose delta is head + the JSON string s (when
// not empty) + tail.
func (e *events) chunk(head, s, tail string) {
	e.buf = append(e.buf, e.prefix...)
	e.buf = append(e.buf, head...)
	if s != "" {
		e.buf = appendString(e.buf, s)
	}
	e.buf = append(e.buf, tail...)
	e.buf = append(e.buf, `,"logprobs":null,"finish_reason":null}]`...)
	e.endChunk()
}

// finish appends the chunk with an empty delta and the finish_reason.
func (e *events) finish(reason string) {
	e.buf = append(e.buf, e.prefix...)
	e.buf = append(e.buf, `{},"logprobs":null,"finish_reason":`...)
	e.buf = appendString(e.buf, reason)
	e.buf = append(e.buf, `}]`...)
	e.endChunk()
}

func (e *events) endChunk() {
	if e.usageNull {
		e.buf = append(e.buf, `,"usage":null`...)
	}
	e.end("}\n\n")
}

func (e *events) end(s string) {
	e.buf = append(e.buf, s...)
	e.ends = append(e.ends, len(e.buf))
}

// toolCalls appends the tool-call deltas: per call one with index, id, type
// and name, then its arguments in pieces.
func (e *events) toolCalls(t *Turn, n int) {
	index := func(i int) string {
		if t.OmitIndex {
			return `{"tool_calls":[{`
		}
		return `{"tool_calls":[{"index":` + strconv.Itoa(i) + `,`
	}
	args := make([][]string, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		args[i] = pieces(c.Arguments, n)
	}
	head := func(i int) {
		c := t.ToolCalls[i]
		e.chunk(index(i)+`"id":`+string(appendString(nil, callID(c, i)))+`,"type":"function","function":{"name":`+
			string(appendString(nil, c.Name))+`,"arguments":""}}]}`, "", "")
	}
	piece := func(i int, p string) {
		e.chunk(index(i)+`"function":{"arguments":`, p, `}}]}`)
	}
	if !t.Interleave {
		for i := range t.ToolCalls {
			head(i)
			for _, p := range args[i] {
				piece(i, p)
			}
		}
		return
	}
	for i := range t.ToolCalls {
		head(i)
	}
	for k := 0; ; k++ {
		sent := false
		for i := range t.ToolCalls {
			if k < len(args[i]) {
				piece(i, args[i][k])
				sent = true
			}
		}
		if !sent {
			return
		}
	}
}

// pieces cuts s into pieces of about n bytes at rune boundaries; n < 0
// means one piece.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n < 0 || len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// appendString appends s as a JSON string, escaping like encoding/json
// (without its HTML escaping).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
