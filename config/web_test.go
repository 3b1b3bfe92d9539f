package config

import "testing"

func TestWebSearchProvider(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"", "duckduckgo"},
		{"tools:\n  web_search:\n    provider: \"\"\n", "duckduckgo"},
		{"tools:\n  web_search:\n    provider: none\n", ""},
		{"tools:\n  web_search:\n    provider: duckduckgo\n    url: http://127.0.0.1:8080\n", "duckduckgo"},
		{"tools:\n  web_search:\n    provider: brave\n    api_key: k\n", "brave"},
	} {
		cfg, err := parse([]byte(c.yaml), "config.yaml", mapLookup(nil))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%q: %v", c.yaml, err)
		}
		if got := cfg.Tools.WebSearch.Provider; got != c.want {
			t.Errorf("%q: provider %q, want %q", c.yaml, got, c.want)
		}
	}
}
