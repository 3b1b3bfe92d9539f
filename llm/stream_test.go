package llm

import (
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func delta(index int, id, name, args string) openai.ToolCall {
	d := openai.ToolCall{ID: id, Function: openai.FunctionCall{Name: name, Arguments: args}}
	if index >= 0 {
		d.Index = &index
	}
	return d
}

func TestToolAcc(t *testing.T) {
	tests := []struct {
		name   string
		deltas []openai.ToolCall
		want   []ToolCall
	}{
		{"by index, out of order", []openai.ToolCall{
			delta(1, "b", "g", ""), delta(0, "a", "f", `{"x"`), delta(1, "", "", `{}`), delta(0, "", "", `:1}`),
		}, []ToolCall{{"a", "f", `{"x":1}`}, {"b", "g", `{}`}}},
		{"no index: same id continues, new id starts", []openai.ToolCall{
			delta(-1, "a", "f", `{"p":`), delta(-1, "", "", `1}`), delta(-1, "b", "g", `{`), delta(-1, "b", "", `}`),
		}, []ToolCall{{"a", "f", `{"p":1}`}, {"b", "g", `{}`}}},
		{"missing id gets one", []openai.ToolCall{delta(2, "", "f", "{}")}, []ToolCall{{"call_2", "f", "{}"}}},
		{"name repeated in every delta", []openai.ToolCall{delta(0, "a", "f", "{"), delta(0, "a", "f", "}")}, []ToolCall{{"a", "f", "{}"}}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a toolAcc
			for i := range tt.deltas {
				if err := a.add(&tt.deltas[i]); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.result(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestToolAccLimits(t *testing.T) {
	var a toolAcc
	big := strings.Repeat("x", maxToolArgs/2)
	d := delta(0, "a", "f", big)
	for i := range 2 {
		if err := a.add(&d); err != nil {
			t.Fatalf("delta %d: %v", i, err)
		}
	}
	d = delta(0, "", "", "y")
	if err := a.add(&d); err == nil {
		t.Error("arguments beyond the cap accepted")
	}
	a = toolAcc{}
	for i := range maxToolCalls + 1 {
		d := delta(i, "", "f", "")
		err := a.add(&d)
		if (err != nil) != (i == maxToolCalls) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}
