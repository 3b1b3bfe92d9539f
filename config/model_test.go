package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestThinkingForms decodes every way of writing thinking: the switch
// words (which YAML 1.1 parsers would read as bools, and YAML 1.2 as
// strings), quoted, from the environment, and the mapping.
func TestThinkingForms(t *testing.T) {
	tests := []struct {
		yml    string
		mode   string
		budget int
	}{
		{"", "", 0},
		{"thinking: on", "on", 0},
		{"thinking: off", "off", 0},
		{"thinking: true", "on", 0},
		{"thinking: false", "off", 0},
		{"thinking: On", "on", 0},
		{"thinking: yes", "on", 0},
		{`thinking: "off"`, "off", 0},
		{"thinking: $TG_ON", "on", 0},
		{"thinking: $TG_OFF", "off", 0},
		{"thinking: $EMPTY", "", 0},
		{"thinking: ~", "", 0},
		{"thinking: {budget: 2048}", "on", 2048},
		{"thinking: {enabled: true}", "on", 0},
		{"thinking: {enabled: false}", "off", 0},
		{"thinking: {enabled: on, budget: 1024}", "on", 1024},
		{"thinking:\n      enabled: true\n      budget: 4096", "on", 4096},
	}
	for _, tt := range tests {
		t.Run(tt.yml, func(t *testing.T) {
			c := mustParse(t, "models:\n  - model: m\n    "+tt.yml+"\n")
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			th := c.Models[0].Thinking
			if th.Mode() != tt.mode || th.Budget != tt.budget {
				t.Errorf("mode %q budget %d, want %q %d", th.Mode(), th.Budget, tt.mode, tt.budget)
			}
		})
	}
}

func TestModelSwitchErrors(t *testing.T) {
	tests := []struct {
		name, yml string
		want      []string
	}{
		{"reasoning effort", "models:\n  - name: fast\n    model: m\n  - name: deep\n    model: m\n    reasoning_effort: extreme\n", []string{
			`config.yaml:6: models[1].reasoning_effort: model "deep": must be none, minimal, low, medium, high, xhigh or max (or left out, to send none); another value can go in extra_body`}},
		{"thinking budget off", "models:\n  - model: m\n    thinking: {enabled: false, budget: 10}\n", []string{
			`config.yaml:3: models[0].thinking.budget: model "m": a budget needs thinking on, but enabled is false`}},
		{"thinking budget negative", "models:\n  - model: m\n    thinking: {budget: -1}\n", []string{
			`config.yaml:3: models[0].thinking.budget: model "m": must not be negative, got -1`}},
		{"extra body own keys", "models:\n  - model: m\n    extra_body:\n      model: x\n      stream: false\n", []string{
			`config.yaml:4: models[0].extra_body.model: model "m": deerflow sets model itself; remove it from extra_body`,
			`config.yaml:5: models[0].extra_body.stream: model "m": deerflow sets stream itself; remove it from extra_body`}},
		{"prices", "models:\n  - model: m\n    price_in: -1\n    price_out: -0.5\n", []string{
			`config.yaml:3: models[0].price_in: model "m": must be US dollars per million tokens, 0 or more (0: unknown)`,
			`config.yaml:4: models[0].price_out: model "m": must be US dollars per million tokens, 0 or more (0: unknown)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErrors(t, tt.yml, tt.want) })
	}
}

func TestModelSwitchParseErrors(t *testing.T) {
	tests := []struct{ yml, want string }{
		{"thinking: maybe", `config.yaml:3: models[0].thinking: expected on, off, true, false or a mapping, got a value of 5 characters`},
		{"thinking: [on]", `config.yaml:3: models[0].thinking: expected a mapping, got a list`},
		{"thinking: {budget: lots}", `config.yaml:3: models[0].thinking.budget: expected an integer, got a value of 4 characters`},
		{"thinking: {level: 3}", `config.yaml:3: unknown key "models[0].thinking.level"`},
		{"extra_body: [1]", `config.yaml:3: models[0].extra_body: expected a mapping, got a list`},
		{"price_in: cheap", `config.yaml:3: models[0].price_in: expected a number, got a value of 5 characters`},
		{`extra_body: {a: "${X Y}"}`, `config.yaml:3: models[0].extra_body.a: bad variable reference in value (want ${NAME} or ${NAME:-default})`},
	}
	for _, tt := range tests {
		t.Run(tt.yml, func(t *testing.T) {
			_, err := parse([]byte("models:\n  - model: m\n    "+tt.yml+"\n"), "config.yaml", mapLookup(testEnv))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
}

// TestExtraBody decodes extra_body into the JSON values it is merged as:
// plain scalars typed by YAML 1.2 (after expansion), quoted ones strings.
func TestExtraBody(t *testing.T) {
	c := mustParse(t, `
x-chat: &chat {enable_thinking: false}
models:
  - model: m
    reasoning_effort: high
    price_in: 0.15
    price_out: $PRICE
    extra_body:
      chat_template_kwargs: *chat
      top_k: 20
      min_p: 0.5
      budget: $TURNS
      quoted: "42"
      switch: on
      flag: true
      nothing: ~
      provider: {order: [groq, "together"], allow_fallbacks: false}
`)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	m := c.Models[0]
	want := map[string]any{
		"chat_template_kwargs": map[string]any{"enable_thinking": false},
		"top_k":                int64(20),
		"min_p":                0.5,
		"budget":               int64(42),
		"quoted":               "42",
		"switch":               "on",
		"flag":                 true,
		"nothing":              nil,
		"provider":             map[string]any{"order": []any{"groq", "together"}, "allow_fallbacks": false},
	}
	if d := cmp.Diff(want, m.ExtraBody); d != "" {
		t.Errorf("extra_body (-want +got):\n%s", d)
	}
	if m.ReasoningEffort != "high" || m.PriceIn != 0.15 || m.PriceOut != 5 {
		t.Errorf("reasoning_effort %q, prices %g/%g", m.ReasoningEffort, m.PriceIn, m.PriceOut)
	}
}
