package main

import (
	"context"
	"errors"
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

// storeHealth is the /healthz store check: one small read transaction.
func (a *app) storeHealth(context.Context) error {
	return a.store.View(func(tx *store.Tx) error {
		_, err := tx.State("healthz")
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
}
