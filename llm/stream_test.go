package llm

import (
	"reflect"
	"strings"
	"testing"
)

func delta(index int, id, name, args string) wireToolDelta {
	d := wireToolDelta{ID: id}
	d.Function.Name, d.Function.Arguments = name, arguments(args)
	if index >= 0 {
		d.Index = &index
	}
	return d
}

func TestToolAcc(t *testing.T) {
	tests := []struct {
		name   string
		deltas []wireToolDelta
		want   []ToolCall
	}{
		{"by index, out of order", []wireToolDelta{
			delta(1, "b", "g", ""), delta(0, "a", "f", `{"x"`), delta(1, "", "", `{}`), delta(0, "", "", `:1}`),
		}, []ToolCall{{ID: "a", Name: "f", Arguments: `{"x":1}`}, {ID: "b", Name: "g", Arguments: `{}`}}},
		{"no index: same id continues, new id starts", []wireToolDelta{
			delta(-1, "a", "f", `{"p":`), delta(-1, "", "", `1}`), delta(-1, "b", "g", `{`), delta(-1, "b", "", `}`),
		}, []ToolCall{{ID: "a", Name: "f", Arguments: `{"p":1}`}, {ID: "b", Name: "g", Arguments: `{}`}}},
		{"missing id gets one", []wireToolDelta{delta(2, "", "f", "{}")}, []ToolCall{{ID: "call_2", Name: "f", Arguments: "{}"}}},
		{"name repeated in every delta", []wireToolDelta{delta(0, "a", "f", "{"), delta(0, "a", "f", "}")}, []ToolCall{{ID: "a", Name: "f", Arguments: "{}"}}},
		{"no index, no id: a new name is a new call", []wireToolDelta{
			delta(-1, "", "f", `{"a":1}`), delta(-1, "", "f", `{"a":2}`), delta(-1, "", "", ``),
		}, []ToolCall{{ID: "call_0", Name: "f", Arguments: `{"a":1}`}, {ID: "call_1", Name: "f", Arguments: `{"a":2}`}}},
		{"one index, two ids: two calls", []wireToolDelta{
			delta(0, "a", "f", `{}`), delta(0, "b", "g", `{`), delta(0, "", "", `}`),
		}, []ToolCall{{ID: "a", Name: "f", Arguments: `{}`}, {ID: "b", Name: "g", Arguments: `{}`}}},
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
			if got := a.result(false); !reflect.DeepEqual(got, tt.want) {
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
