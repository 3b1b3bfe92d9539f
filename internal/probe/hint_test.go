package probe

import (
	"slices"
	"testing"
)

func TestHasVersion(t *testing.T) {
	for base, want := range map[string]bool{
		"https://api.openai.com/v1":                                true,
		"https://openrouter.ai/api/v1":                             true,
		"https://generativelanguage.googleapis.com/v1beta/openai/": true,
		"https://open.bigmodel.cn/api/paas/v4":                     true,
		"https://dashscope.aliyuncs.com/compatible-mode/v1":        true,
		"http://127.0.0.1:11434":                                   false,
		"http://localhost:8000/":                                   false,
		"https://api.example.com/openai":                           false,
	} {
		if got := HasVersion(base); got != want {
			t.Errorf("HasVersion(%q) = %v, want %v", base, got, want)
		}
	}
}

func TestClosest(t *testing.T) {
	ids := []string{"gpt-4o", "o3-mini", "gpt-4o-mini", "Qwen/Qwen3-32B"}
	if got, want := Closest(ids, "gpt-4o-mni", 2), []string{"gpt-4o-mini", "gpt-4o"}; !slices.Equal(got, want) {
		t.Errorf("closest = %q, want %q", got, want)
	}
	if got := Closest(ids, "qwen/qwen3-32b", 1); !slices.Equal(got, []string{"Qwen/Qwen3-32B"}) {
		t.Errorf("closest ignoring case = %q", got)
	}
	if got := Closest(nil, "x", 5); len(got) != 0 {
		t.Errorf("closest of none = %q", got)
	}
}
