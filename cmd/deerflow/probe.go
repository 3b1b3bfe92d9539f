package main

import (
	"context"
	"io"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/probe"
	"github.com/deerflow/deerflow/llm"
)

// probeModels is `deerflow check --probe-models`: each configured model,
// called the way serve calls it (but bounded and without retries), gets a
// few tiny requests; the table of what works goes to stdout. It returns
// the exit code.
func probeModels(ctx context.Context, cfg *config.Config, stdout io.Writer) int {
	return probe.Run(ctx, cfg.Models, func(m config.Model) llm.Model {
		o := modelOptions(m, nil)
		o.Timeout, o.MaxRetries = probe.Timeout, 0
		return llm.New(o)
	}, stdout)
}
