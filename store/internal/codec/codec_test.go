package codec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMessageCodec(t *testing.T) {
	local := time.FixedZone("X", 3600)
	tests := []struct {
		name string
		in   Message
		want []byte // nil: only check the round trip
	}{
		{"minimal", Message{Role: "user", Content: "hi"},
			[]byte{msgFormat, 1<<3 | 2, 4, 'u', 's', 'e', 'r', 2<<3 | 2, 2, 'h', 'i'}},
		{"empty", Message{}, []byte{msgFormat}},
		{"hidden", Message{Role: "system", Hidden: true}, nil},
		{"epoch", Message{Role: "user", Time: time.Unix(0, 0).UTC()}, nil},
		{"before epoch", Message{Time: time.Date(1901, 2, 3, 4, 5, 6, 7, time.UTC)}, nil},
		{"far future", Message{Time: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}, nil},
		{"everything", Message{Role: "assistant", Content: strings.Repeat("é", 300), Reasoning: "r",
			ToolCalls:  []ToolCall{{ID: "1", Name: "a", Arguments: "{}"}, {}, {Name: "b"}},
			ToolCallID: "x", Name: "n", RunID: "run", Hidden: true,
			Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Encode(&tt.in)
			if tt.want != nil && !bytes.Equal(b, tt.want) {
				t.Errorf("encoded %v, want %v", b, tt.want)
			}
			got, err := Decode("t", 3, b)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.in
			want.Seq = 3
			if len(want.ToolCalls) == 0 {
				want.ToolCalls = nil
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("decoded %+v\nwant    %+v", *got, want)
			}
		})
	}
	// Times come back in UTC, at the same instant.
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, local)
	got, err := Decode("t", 1, Encode(&Message{Time: at}))
	if err != nil || !got.Time.Equal(at) || got.Time.Location() != time.UTC {
		t.Errorf("time %v, %v; want %v in UTC", got.Time, err, at)
	}
	// Fields a newer deerflow adds are skipped.
	b := Encode(&Message{Role: "user"})
	b = appendString(b, 99, "future")
	b = appendVarint(b, 98, 7)
	if got, err := Decode("t", 1, b); err != nil || got.Role != "user" {
		t.Errorf("with unknown fields: %+v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {0}, {'{'}, {msgFormat, 1<<3 | 2, 5, 'a'}, {msgFormat, 0x80}, {msgFormat, 1<<3 | 5}} {
		if _, err := Decode("t", 1, bad); err == nil {
			t.Errorf("Decode(%v) succeeded", bad)
		}
	}
}

// TestOpaqueFieldNumbers: the provider's opaque fields have numbers of
// their own, after the older ones, so a reader that predates them skips
// them.
func TestOpaqueFieldNumbers(t *testing.T) {
	in := Message{Role: "assistant", Seq: 2,
		ToolCalls: []ToolCall{{ID: "1", Name: "a", Arguments: "{}", Extra: json.RawMessage(`{"extra_content":{"google":{"thought_signature":"c2ln"}}}`)}, {ID: "2", Name: "b"}},
		Extra:     json.RawMessage(`{"reasoning_details":[{"type":"reasoning.encrypted","data":"eA=="}]}`),
		Provider:  "https://generativelanguage.googleapis.com/v1beta/openai|gemini-3-pro-preview"}
	if got, err := Decode("t", 2, Encode(&in)); err != nil || !reflect.DeepEqual(*got, in) {
		t.Errorf("decoded %+v, %v\nwant    %+v", got, err, in)
	}
	b := Encode(&Message{Role: "assistant", Extra: json.RawMessage(`{}`), Provider: "p",
		ToolCalls: []ToolCall{{ID: "1", Extra: json.RawMessage(`{}`)}}})
	wantTail := []byte{fExtra<<3 | 2, 2, '{', '}', fProvider<<3 | 2, 1, 'p'}
	if !bytes.HasSuffix(b, wantTail) || !bytes.Contains(b, []byte{tcExtra<<3 | 2, 2, '{', '}'}) {
		t.Errorf("encoded %v", b)
	}
}

// FuzzDecodeMessage: no input makes the decoder panic, and whatever it
// accepts re-encodes to something that decodes the same.
func FuzzDecodeMessage(f *testing.F) {
	f.Add(Encode(&Message{Role: "user", Content: "hi", Time: time.Now()}))
	f.Add(Encode(&Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "1", Name: "x", Arguments: "{}"}}}))
	f.Add(Encode(&Message{Role: "assistant", Extra: json.RawMessage(`{"a":1}`), Provider: "p", ToolCalls: []ToolCall{{ID: "1", Extra: json.RawMessage(`{}`)}}}))
	f.Add([]byte{msgFormat, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode("t", 1, b)
		if err != nil {
			return
		}
		again, err := Decode("t", 1, Encode(m))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m, again) {
			t.Errorf("%+v\nre-decoded %+v", m, again)
		}
	})
}
