package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type greetArgs struct {
	Name  string   `json:"name" desc:"who to greet"`
	Times int      `json:"times,omitempty"`
	Style string   `json:"style,omitempty" enum:"plain,loud"`
	Tags  []string `json:"tags,omitempty"`
}

func greetTool() Tool {
	return Func("greet", "Greets someone.", func(_ context.Context, in greetArgs) (string, error) {
		n := max(in.Times, 1)
		s := strings.Repeat("hi "+in.Name+" ", n)
		if in.Style == "loud" {
			s = strings.ToUpper(s)
		}
		return strings.TrimSpace(s), nil
	})
}

func TestFuncSchema(t *testing.T) {
	var schema struct {
		Type       string                    `json:"type"`
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(greetTool().Spec().Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || len(schema.Required) != 1 || schema.Required[0] != "name" {
		t.Fatalf("schema = %+v", schema)
	}
	if schema.Properties["name"]["description"] != "who to greet" {
		t.Errorf("name description = %v", schema.Properties["name"])
	}
	if schema.Properties["times"]["type"] != "integer" || schema.Properties["tags"]["type"] != "array" {
		t.Errorf("properties = %v", schema.Properties)
	}
	if enum, _ := schema.Properties["style"]["enum"].([]any); len(enum) != 2 {
		t.Errorf("style enum = %v", schema.Properties["style"])
	}
}

func TestFuncArguments(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    string
		wantErr string
	}{
		{"ok", `{"name":"ann"}`, "hi ann", ""},
		{"optional", `{"name":"bo","times":2,"style":"loud"}`, "HI BO HI BO", ""},
		{"unknown fields ignored", `{"name":"cy","mood":"happy"}`, "hi cy", ""},
		{"double encoded", `"{\"name\":\"di\"}"`, "hi di", ""},
		{"missing required", `{}`, "", "missing required argument(s): name"},
		{"null required", `{"name":null}`, "", "missing required argument(s): name"},
		{"empty args", ``, "", "missing required argument(s): name"},
		{"malformed", `{"name": "ann"`, "", "arguments must be one JSON object"},
		{"not an object", `[1,2]`, "", "arguments must be one JSON object"},
		{"wrong type", `{"name":"ann","times":"two"}`, "", `argument "times" must be an integer, not string`},
		{"bad enum", `{"name":"ann","style":"soft"}`, "", `argument "style" must be one of plain, loud`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewRegistry(greetTool()).Call(context.Background(), "greet", json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if !IsArgError(err) {
					t.Errorf("err %T is not an ArgError", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestRegistryUnknownTool(t *testing.T) {
	r := NewRegistry(greetTool())
	_, err := r.Call(context.Background(), "gret", nil)
	if err == nil || !strings.Contains(err.Error(), `unknown tool "gret"`) || !strings.Contains(err.Error(), "greet") {
		t.Fatalf("err = %v", err)
	}
	if got := r.Filter(func(string) bool { return false }).Len(); got != 0 {
		t.Errorf("filtered len = %d", got)
	}
}
