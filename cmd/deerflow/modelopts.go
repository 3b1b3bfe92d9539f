package main

import (
	"context"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/llm"
)

// modelOptions is how a configured model is called: the one place a
// config.Model becomes llm.Options, for serve, chat and check
// --probe-models alike. logf may be nil.
func modelOptions(m config.Model, logf func(ctx context.Context, format string, args ...any)) llm.Options {
	return llm.Options{
		BaseURL:       m.BaseURL,
		APIKey:        m.APIKey,
		Model:         m.Model,
		Timeout:       time.Duration(m.TimeoutSeconds) * time.Second,
		MaxRetries:    m.MaxRetries,
		SendReasoning: m.SendReasoning,
		Logf:          logf,

		ReasoningEffort: m.ReasoningEffort,
		Thinking:        llm.Thinking{Mode: m.Thinking.Mode(), Budget: m.Thinking.Budget},
		ExtraBody:       m.ExtraBody,
	}
}
