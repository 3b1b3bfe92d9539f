package main

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/ops"
	"github.com/deerflow/deerflow/store"
)

// newMetrics returns the process's metrics when the operator endpoints are
// on (http.listen), else nil: then no registry or collector is built and
// every recording call is a no-op.
func newMetrics(cfg *config.Config) *metrics.Metrics {
	if cfg.HTTP.Listen == "" {
		return nil
	}
	return metrics.New()
}

// startOps serves /healthz and /metrics on http.listen, over the app's
// store, models and metrics and the channels' connection states. It
// returns nil (and does nothing) when http.listen is empty; a listen
// failure is an error naming http.listen.
func startOps(a *app, chans []channels.Channel) (*ops.Server, error) {
	if a.cfg.HTTP.Listen == "" {
		return nil, nil
	}
	o := ops.Options{
		Addr:    a.cfg.HTTP.Listen,
		Metrics: a.metrics,
		Store:   a.storeHealth,
		Logger:  a.log,
	}
	for _, ch := range chans {
		if hr, ok := ch.(channels.HealthReporter); ok {
			o.Channels = append(o.Channels, ops.Channel{Name: ch.Name(), Health: func() ops.ChannelHealth {
				h := hr.Health()
				return ops.ChannelHealth{Connected: h.Connected, Detail: h.Detail, Since: h.Since}
			}})
		}
	}
	if a.api != nil {
		o.API = a.api
	}
	if a.mcp != nil {
		o.MCP = func() any { return a.mcp.States() }
	}
	for _, m := range a.cfg.Models {
		o.Models = append(o.Models, ops.Model{Name: m.Name, BaseURL: m.BaseURL, APIKey: m.APIKey})
	}
	s := ops.New(o)
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// stopOps stops the operator endpoints (nil: nothing to stop).
func stopOps(s *ops.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Shutdown(ctx)
}

// storeHealth is the /healthz store check: damage met since start, a full
// disk, failing writes, then one small read transaction. Each is named for
// the operator in the report's store detail.
func (a *app) storeHealth(context.Context) error {
	err := a.store.Health()
	if err == nil {
		return nil
	}
	detail := "the database could not be read"
	switch {
	case errors.Is(err, store.ErrDamaged):
		detail = "damaged:"
		for _, d := range a.store.Damaged() {
			detail += " " + d.What()
		}
		detail += " (their conversations are quarantined); run deerflow doctor"
	case errors.Is(err, store.ErrNoSpace):
		detail = "the disk holding " + filepath.Dir(a.store.Path()) + " is full: new messages cannot be stored"
	case errors.Is(err, store.ErrWriteFailed):
		detail = "writes to the database fail: new messages cannot be stored"
	}
	return &ops.StoreError{Detail: detail, Err: err}
}
