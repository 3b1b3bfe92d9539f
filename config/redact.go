package config

import (
	"maps"
	"slices"

	"github.com/deerflow/deerflow/internal/redact"
)

// Redacted returns a copy safe to print (deerflow check): tokens, keys and
// secrets that are set become "***" (unset ones stay "", so a missing secret
// still shows), MCP env and header values become "***", and passwords in
// URLs are masked along with secret query parameters. The receiver is not modified.
func (c *Config) Redacted() *Config {
	r := *c
	r.Models = slices.Clone(c.Models)
	for i := range r.Models {
		m := &r.Models[i]
		m.APIKey = mask(m.APIKey)
		m.BaseURL = maskURL(m.BaseURL)
	}
	r.Channels = c.Channels.redacted()
	r.HTTP.APIToken = mask(c.HTTP.APIToken)
	r.Transcription.APIKey = mask(c.Transcription.APIKey)
	r.Transcription.BaseURL = maskURL(c.Transcription.BaseURL)
	r.ImageGeneration.APIKey, r.ImageGeneration.BaseURL = mask(c.ImageGeneration.APIKey), maskURL(c.ImageGeneration.BaseURL)
	r.MCP.Servers = slices.Clone(c.MCP.Servers)
	for i := range r.MCP.Servers {
		s := &r.MCP.Servers[i]
		s.Env = maskValues(s.Env)
		s.Headers = maskValues(s.Headers)
		s.URL = maskURL(s.URL)
		s.OAuth.ClientSecret = mask(s.OAuth.ClientSecret)
	}
	r.ACP.Agents = slices.Clone(c.ACP.Agents)
	for i := range r.ACP.Agents {
		r.ACP.Agents[i].Env = maskValues(r.ACP.Agents[i].Env)
	}
	return &r
}

func mask(s string) string {
	if s == "" {
		return ""
	}
	return "***"
}

func maskValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = mask(v)
	}
	return out
}

// maskURL hides the credentials in a URL: the password in its user info
// and secret query parameters (https://user:***@host/v1?key=***).
func maskURL(s string) string { return redact.URLs(s) }
