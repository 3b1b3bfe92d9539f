package llm

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
)

// Thinking switches a model's reasoning on or off, where the provider has
// a switch for it.
type Thinking struct {
	Mode   string // "" leaves the provider's default; "on" or "off"
	Budget int    // reasoning tokens when on; 0 is the provider's default
}

// thinkingSwitch returns the request fields that set t on a provider.
type thinkingSwitch func(t Thinking) map[string]any

// thinkingSwitches are the providers' switches, by the host of the base
// URL (a suffix of it). Hosts not listed get reasoning_effort "medium"
// for "on" and nothing for "off".
var thinkingSwitches = []struct {
	host string
	set  thinkingSwitch
}{
	{"dashscope.aliyuncs.com", qwenThinking}, // Qwen
	{"dashscope-intl.aliyuncs.com", qwenThinking},
	{"bigmodel.cn", typeThinking}, // Zhipu GLM
	{"api.z.ai", typeThinking},    // Zhipu GLM, international
	{"moonshot.cn", typeThinking}, // Kimi
	{"moonshot.ai", typeThinking},
	{"deepseek.com", typeThinking},
	{"generativelanguage.googleapis.com", geminiThinking},
	{"openrouter.ai", openRouterThinking},
	{"anthropic.com", anthropicThinking},
}

func qwenThinking(t Thinking) map[string]any {
	m := map[string]any{"enable_thinking": t.Mode == "on"}
	if t.Mode == "on" && t.Budget > 0 {
		m["thinking_budget"] = t.Budget
	}
	return m
}

func typeThinking(t Thinking) map[string]any {
	return map[string]any{"thinking": map[string]any{"type": enabled(t)}}
}

// geminiThinking: the OpenAI endpoint takes Gemini's own thinking_config
// in a top-level "extra_body" object (ai.google.dev, OpenAI compatibility).
func geminiThinking(t Thinking) map[string]any {
	cfg := map[string]any{"thinking_budget": 0}
	if t.Mode == "on" {
		cfg = map[string]any{"include_thoughts": true}
		if t.Budget > 0 {
			cfg["thinking_budget"] = t.Budget
		}
	}
	return map[string]any{"extra_body": map[string]any{"google": map[string]any{"thinking_config": cfg}}}
}

func openRouterThinking(t Thinking) map[string]any {
	r := map[string]any{"enabled": t.Mode == "on"}
	if t.Mode == "on" && t.Budget > 0 {
		r["max_tokens"] = t.Budget
	}
	return map[string]any{"reasoning": r}
}

// anthropicThinking: Anthropic wants a budget; 1024 is its least.
func anthropicThinking(t Thinking) map[string]any {
	if t.Mode != "on" {
		return map[string]any{"thinking": map[string]any{"type": "disabled"}}
	}
	return map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": max(t.Budget, 1024)}}
}

func enabled(t Thinking) string {
	if t.Mode == "on" {
		return "enabled"
	}
	return "disabled"
}

// thinkingFields returns the reasoning_effort to send, from the client's
// ReasoningEffort and Thinking, and the request fields of the provider's
// own switch for Thinking.
func (c *Client) thinkingFields() (effort string, fields map[string]any) {
	effort = c.effort
	if c.thinking.Mode != "on" && c.thinking.Mode != "off" {
		return effort, nil
	}
	host := ""
	if u, err := url.Parse(c.baseURL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	for _, s := range thinkingSwitches {
		if host == s.host || strings.HasSuffix(host, "."+s.host) {
			return effort, s.set(c.thinking)
		}
	}
	if c.thinking.Mode == "on" && effort == "" {
		effort = "medium"
	}
	return effort, nil
}

// addOptions merges the thinking switch's fields, then ExtraBody, into
// the request body b.
func (c *Client) addOptions(b []byte, fields map[string]any) ([]byte, error) {
	if len(fields) == 0 && len(c.extraBody) == 0 {
		return b, nil
	}
	var body map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&body); err != nil {
		return nil, err
	}
	merge(body, fields)
	merge(body, c.extraBody)
	return json.Marshal(body)
}

// merge copies src into dst: objects are merged recursively, other values
// replace what dst has.
func merge(dst, src map[string]any) {
	for k, v := range src {
		sv, ok := v.(map[string]any)
		dv, ok2 := dst[k].(map[string]any)
		if ok && ok2 {
			merge(dv, sv)
			continue
		}
		if ok {
			cp := map[string]any{}
			merge(cp, sv)
			v = cp
		}
		dst[k] = v
	}
}
