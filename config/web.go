package config

import "strings"

// WebFetch configures web_fetch.
type WebFetch struct {
	AllowPrivateAddresses bool `yaml:"allow_private_addresses"`
	MaxChars              int  `yaml:"max_chars"`       // of the page returned; default 4096
	TimeoutSeconds        int  `yaml:"timeout_seconds"` // default 20
}

// WebSearch configures web_search and image_search, which are offered
// together and ask the same provider.
type WebSearch struct {
	// Provider is duckduckgo (the default: no key), tavily, brave or
	// searxng; none in the file switches both tools off, and loading turns
	// it into "", which is how the rest of the program reads "off".
	Provider   string `yaml:"provider"`
	APIKey     string `yaml:"api_key"`     // tavily, brave
	URL        string `yaml:"url"`         // searxng: the instance; others: a base URL other than the public service
	MaxResults int    `yaml:"max_results"` // default 5
}

// DefaultSearchProvider is the provider used when none is set.
const DefaultSearchProvider = "duckduckgo"

func (c *Config) webDefaults() {
	defInt(&c.Tools.WebFetch.MaxChars, 4096)
	defInt(&c.Tools.WebFetch.TimeoutSeconds, 20)
	ws := &c.Tools.WebSearch
	defInt(&ws.MaxResults, 5)
	switch strings.TrimSpace(ws.Provider) {
	case "":
		ws.Provider = DefaultSearchProvider
	case "none":
		ws.Provider = ""
	}
}

// webTools checks the web search and fetch tools.
func (v *validator) webTools() {
	c := v.c
	ws := c.Tools.WebSearch
	switch ws.Provider {
	case "", "duckduckgo", "searxng":
	case "tavily", "brave":
		if strings.TrimSpace(ws.APIKey) == "" {
			v.fail("tools.web_search.api_key", "required for the %s provider", ws.Provider)
		}
	default:
		v.fail("tools.web_search.provider", "must be duckduckgo, tavily, brave, searxng or none")
	}
	if ws.Provider == "searxng" && ws.URL == "" {
		v.fail("tools.web_search.url", "required for searxng: the instance's URL")
	}
	if ws.URL != "" {
		v.httpURL("tools.web_search.url", ws.URL)
	}
	v.between("tools.web_search.max_results", ws.MaxResults, 1, 10)
	v.nonNegative("tools.web_fetch.max_chars", c.Tools.WebFetch.MaxChars)
	v.nonNegative("tools.web_fetch.timeout_seconds", c.Tools.WebFetch.TimeoutSeconds)
}
