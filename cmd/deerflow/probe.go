package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/probe"
	"github.com/deerflow/deerflow/llm"
)

// probeModels is `deerflow check --probe-models`: each configured model,
// called the way serve calls it (but bounded and without retries), gets a
// few tiny requests; the table of what works goes to stdout. It returns
// the exit code.
func probeModels(ctx context.Context, cfg *config.Config, stdout io.Writer) int {
	return probe.Run(ctx, cfg.Models, probeClient, stdout)
}

// probeClient is model m's client as serve builds it, bounded by
// probe.Timeout and without retries.
func probeClient(m config.Model) llm.Model {
	o := modelOptions(m, nil)
	o.Timeout, o.MaxRetries = probe.Timeout, 0
	return llm.New(o)
}

// checkModels is serve's start-up check (skipped by --no-model-check):
// an error naming each model that cannot answer and its fix; failures
// that may pass by themselves are only logged.
func checkModels(ctx context.Context, cfg *config.Config, stderr io.Writer) error {
	errs, warns := probe.Usable(ctx, cfg.Models, probeClient)
	log := newLogger(cfg, stderr)
	for _, w := range warns {
		log.Warn("model check: " + w)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("a model cannot answer, so serve does not start:\n  %s\n(start anyway with --no-model-check)", strings.Join(errs, "\n  "))
}
