// Package codec is the encoding of deerflow's records: a thread's
// messages, the bulk of the database, in a compact binary format (with the
// Message type, package store's by alias), and the other records as
// JSON. Package store writes and reads them, and store/doctor checks them;
// nothing else may import it.
//
// It imports no package of ours.
package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"` // JSON text, as the model sent it
	// Extra is the provider's opaque fields of the call (a JSON object),
	// sent back verbatim to the provider that wrote it (Message.Provider).
	Extra json.RawMessage `json:"extra,omitempty"`
}

// Message is one entry of a thread's history.
type Message struct {
	// Seq orders a thread's messages. AppendMessages assigns it: 1, 2, …
	// per thread, never reused, even after the last messages are deleted.
	Seq        uint64     `json:"-"`
	Role       string     `json:"role"` // system|user|assistant|tool
	Content    string     `json:"content,omitempty"`
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	RunID      string     `json:"run_id,omitempty"`
	// Hidden messages go to the model but are never shown to users:
	// synthetic repairs, injected instructions.
	Hidden bool      `json:"hidden,omitempty"`
	Time   time.Time `json:"time,omitzero"`
	// Extra is the provider's opaque fields of an assistant message (a
	// JSON object, e.g. reasoning_details), and Provider who wrote them
	// and the tool calls' Extra: base URL and model joined by "|".
	Extra    json.RawMessage `json:"extra,omitempty"`
	Provider string          `json:"provider,omitempty"`
}

// Messages are the bulk of the database and are read on every turn, so they
// use a compact binary encoding rather than JSON (which costs about 5 µs to
// decode each). It is protobuf's wire format, written by hand: a value is a
// format byte, then fields as uvarint(number<<3 | type) followed by a uvarint
// (type 0) or a uvarint length and that many bytes (type 2). Empty fields are
// left out; a reader skips field numbers it does not know, so fields can be
// added without a migration. Never reuse a number.
const msgFormat = 1

const (
	wireVarint = 0
	wireBytes  = 2
)

// Message field numbers.
const (
	fRole       = 1
	fContent    = 2
	fReasoning  = 3
	fToolCall   = 4 // repeated; each an embedded record of the tc* fields
	fToolCallID = 5
	fName       = 6
	fRunID      = 7
	fHidden     = 8
	fTimeSec    = 9  // zigzag varint, Unix seconds
	fTimeNsec   = 10 // nanoseconds within the second
	fExtra      = 11 // JSON object, verbatim
	fProvider   = 12
)

// ToolCall field numbers.
const (
	tcID    = 1
	tcName  = 2
	tcArgs  = 3
	tcExtra = 4 // JSON object, verbatim
)

func appendTag(b []byte, num, typ int) []byte {
	return binary.AppendUvarint(b, uint64(num)<<3|uint64(typ))
}

func appendString(b []byte, num int, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, num, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendVarint(b []byte, num int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, num, wireVarint), v)
}

// Encode returns m in the message format.
func Encode(m *Message) []byte {
	n := 24 + len(m.Role) + len(m.Content) + len(m.Reasoning) + len(m.ToolCallID) + len(m.Name) + len(m.RunID) + len(m.Extra) + len(m.Provider)
	for _, tc := range m.ToolCalls {
		n += 16 + len(tc.ID) + len(tc.Name) + len(tc.Arguments) + len(tc.Extra)
	}
	b := make([]byte, 0, n)
	b = append(b, msgFormat)
	b = appendString(b, fRole, m.Role)
	b = appendString(b, fContent, m.Content)
	b = appendString(b, fReasoning, m.Reasoning)
	for _, tc := range m.ToolCalls {
		var sub []byte
		sub = appendString(sub, tcID, tc.ID)
		sub = appendString(sub, tcName, tc.Name)
		sub = appendString(sub, tcArgs, tc.Arguments)
		sub = appendString(sub, tcExtra, string(tc.Extra))
		b = appendTag(b, fToolCall, wireBytes)
		b = binary.AppendUvarint(b, uint64(len(sub)))
		b = append(b, sub...)
	}
	b = appendString(b, fToolCallID, m.ToolCallID)
	b = appendString(b, fName, m.Name)
	b = appendString(b, fRunID, m.RunID)
	if m.Hidden {
		b = appendVarint(b, fHidden, 1)
	}
	if !m.Time.IsZero() {
		sec := m.Time.Unix()
		b = appendTag(b, fTimeSec, wireVarint) // even when 0: marks a non-zero time
		b = binary.AppendUvarint(b, uint64(sec<<1^sec>>63))
		b = appendVarint(b, fTimeNsec, uint64(m.Time.Nanosecond()))
	}
	b = appendString(b, fExtra, string(m.Extra))
	b = appendString(b, fProvider, m.Provider)
	return b
}

// fieldReader walks the fields of one record. Bytes fields are returned as
// substrings of s, so a whole message costs one string allocation.
type fieldReader struct {
	s   string
	err error
}

var errTruncated = errors.New("truncated record")

func (r *fieldReader) uvarint() uint64 {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		if len(r.s) == 0 {
			break
		}
		c := r.s[0]
		r.s = r.s[1:]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.err = errTruncated
	return 0
}

// next returns the next field. For a varint field str is "", for a bytes
// field v is 0.
func (r *fieldReader) next() (num int, v uint64, str string, ok bool) {
	if r.err != nil || len(r.s) == 0 {
		return 0, 0, "", false
	}
	tag := r.uvarint()
	switch tag & 7 {
	case wireVarint:
		v = r.uvarint()
	case wireBytes:
		n := r.uvarint()
		if n > uint64(len(r.s)) {
			r.err = errTruncated
			return 0, 0, "", false
		}
		str, r.s = r.s[:n], r.s[n:]
	default:
		r.err = fmt.Errorf("unknown wire type %d", tag&7)
	}
	return int(tag >> 3), v, str, r.err == nil
}

// Decode reads message seq of thread threadID from b, a value Encode
// wrote (or a later build, whose new fields it skips).
func Decode(threadID string, seq uint64, b []byte) (*Message, error) {
	if len(b) == 0 || b[0] != msgFormat {
		return nil, fmt.Errorf("store: message %s/%d: unknown format", threadID, seq)
	}
	m := &Message{Seq: seq}
	r := fieldReader{s: string(b[1:])}
	var sec int64
	var hasTime bool
	var nsec uint64
	for {
		num, v, s, ok := r.next()
		if !ok {
			break
		}
		switch num {
		case fRole:
			m.Role = s
		case fContent:
			m.Content = s
		case fReasoning:
			m.Reasoning = s
		case fToolCall:
			m.ToolCalls = append(m.ToolCalls, decodeToolCall(s, &r.err))
		case fToolCallID:
			m.ToolCallID = s
		case fName:
			m.Name = s
		case fRunID:
			m.RunID = s
		case fHidden:
			m.Hidden = v != 0
		case fTimeSec:
			sec, hasTime = int64(v>>1)^-int64(v&1), true
		case fTimeNsec:
			nsec = v
		case fExtra:
			m.Extra = raw(s)
		case fProvider:
			m.Provider = s
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("store: message %s/%d: %w", threadID, seq, r.err)
	}
	if hasTime {
		m.Time = time.Unix(sec, int64(nsec)).UTC()
	}
	return m, nil
}

func decodeToolCall(s string, errp *error) ToolCall {
	var tc ToolCall
	r := fieldReader{s: s}
	for {
		num, _, str, ok := r.next()
		if !ok {
			break
		}
		switch num {
		case tcID:
			tc.ID = str
		case tcName:
			tc.Name = str
		case tcArgs:
			tc.Arguments = str
		case tcExtra:
			tc.Extra = raw(str)
		}
	}
	if r.err != nil && *errp == nil {
		*errp = r.err
	}
	return tc
}

// raw returns s as JSON text; nil when empty, as Encode leaves it out.
func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// JSON marshals v, a record other than a message, as compact JSON without
// HTML escaping. The result is a fresh slice: bbolt needs Put values to
// stay valid until commit.
func JSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
