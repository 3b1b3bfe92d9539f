// Package ops is the operator HTTP server behind http.listen: /healthz
// (is every channel connected, the store readable, every model reachable)
// and /metrics (Prometheus).
//
// The checks come in as functions and plain values, so ops imports
// neither bus nor agent nor the channels; of deerflow it imports only
// metrics (the handler, and the latest real model calls).
package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/deerflow/deerflow/metrics"
)

// Options configures a Server.
type Options struct {
	// Addr is http.listen, e.g. 127.0.0.1:9090.
	Addr string
	// Metrics is served at /metrics and tells the model checks about real
	// calls; nil: /metrics is 404 and models are always probed.
	Metrics  *metrics.Metrics
	Channels []Channel
	// Store, when set, runs a cheap read transaction; an error makes the
	// store (and /healthz) unhealthy. A *StoreError's Detail is shown;
	// any other error's text goes only to the log.
	Store  func(context.Context) error
	Models []Model
	Logger *slog.Logger // nil: slog.Default()
	// API serves /api/ (the HTTP API, which checks its own token); nil:
	// 404.
	API http.Handler
	// MCP reports the MCP servers' states, shown under "mcp" (a server
	// down does not make the service degraded: its tools say so); nil:
	// not shown.
	MCP func() any

	// Recent is how old a real model call may be to stand for the model's
	// state (0 → 30 s); Cache is how long a probe's result is kept (0 →
	// 15 s); ProbeTimeout bounds one probe (0 → 2 s).
	Recent, Cache, ProbeTimeout time.Duration
	HTTPClient                  *http.Client // for probes; nil: a plain client
}

// Channel is one chat channel's connection state.
type Channel struct {
	Name   string
	Health func() ChannelHealth
}

// ChannelHealth is what a channel reports.
type ChannelHealth struct {
	Connected bool
	Detail    string
	Since     time.Time
}

// Model is one configured model. Its key is used for the probe only and
// never appears in any output.
type Model struct {
	Name    string // the config name, as in /models
	BaseURL string // the OpenAI-compatible base, e.g. https://api.openai.com/v1
	APIKey  string
}

// Server serves /healthz and /metrics.
type Server struct {
	o      Options
	log    *slog.Logger
	probes map[string]*probe // by model name
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}
}

// New returns a Server; it listens only on Start.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Recent <= 0 {
		o.Recent = 30 * time.Second
	}
	if o.Cache <= 0 {
		o.Cache = 15 * time.Second
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 2 * time.Second
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	s := &Server{o: o, log: o.Logger, probes: map[string]*probe{}}
	for _, m := range o.Models {
		s.probes[m.Name] = &probe{model: m, client: o.HTTPClient, timeout: o.ProbeTimeout, ttl: o.Cache}
	}
	return s
}

// Handler is the server's mux: /healthz, /metrics, the API under /api/
// when there is one, and 404 for the rest.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", s.o.Metrics.Handler())
	if s.o.API != nil {
		mux.Handle("/api/", s.o.API)
	}
	return mux
}

// Start listens on Options.Addr and serves in the background. A listen
// failure (the port is taken) is returned at once, naming http.listen.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.o.Addr)
	if err != nil {
		return fmt.Errorf("http.listen %s: %w", s.o.Addr, err)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
	}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("operator endpoints stopped", "addr", s.o.Addr, "err", err)
		}
	}()
	s.log.Info("operator endpoints listening", "addr", ln.Addr().String(), "paths", "/healthz /metrics")
	return nil
}

// Addr is the address the server listens on (useful with port 0).
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Shutdown stops accepting requests and waits for those in flight, or
// until ctx is done. It is safe on a Server that never started.
func (s *Server) Shutdown(ctx context.Context) error {
	if s == nil || s.srv == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	select {
	case <-s.done:
	case <-ctx.Done():
	}
	return err
}

// Report is the /healthz body.
type Report struct {
	Status   string                  `json:"status"` // "ok" or "degraded"
	Channels map[string]ChannelState `json:"channels"`
	Store    *StoreState             `json:"store,omitempty"`
	Models   map[string]ModelState   `json:"models"`
	MCP      any                     `json:"mcp,omitempty"`
}

// ChannelState is a channel in the report.
type ChannelState struct {
	Connected bool       `json:"connected"`
	Detail    string     `json:"detail,omitempty"`
	Since     *time.Time `json:"since,omitempty"`
}

// StoreState is the store in the report.
type StoreState struct {
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// StoreError is an error of Options.Store whose Detail, written for an
// operator (what is damaged, which disk is full), /healthz shows.
type StoreError struct {
	Detail string
	Err    error
}

func (e *StoreError) Error() string { return e.Detail + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// ModelState is a model in the report.
type ModelState struct {
	Reachable bool   `json:"reachable"`
	Detail    string `json:"detail,omitempty"`
}

// Check runs every check: the store and the models concurrently.
func (s *Server) Check(ctx context.Context) Report {
	r := Report{Status: "ok", Channels: map[string]ChannelState{}, Models: map[string]ModelState{}}
	for _, ch := range s.o.Channels {
		h := ch.Health()
		cs := ChannelState{Connected: h.Connected, Detail: h.Detail}
		if !h.Since.IsZero() {
			since := h.Since.UTC().Truncate(time.Second)
			cs.Since = &since
		}
		r.Channels[ch.Name] = cs
	}
	if s.o.MCP != nil {
		r.MCP = s.o.MCP()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	if s.o.Store != nil {
		wg.Go(func() {
			st := s.checkStore(ctx)
			mu.Lock()
			r.Store = &st
			mu.Unlock()
		})
	}
	for _, p := range s.sortedProbes() {
		wg.Go(func() {
			ms := s.checkModel(ctx, p)
			mu.Lock()
			r.Models[p.model.Name] = ms
			mu.Unlock()
		})
	}
	wg.Wait()
	if !r.healthy() {
		r.Status = "degraded"
	}
	return r
}

func (r *Report) healthy() bool {
	for _, c := range r.Channels {
		if !c.Connected {
			return false
		}
	}
	for _, m := range r.Models {
		if !m.Reachable {
			return false
		}
	}
	return r.Store == nil || r.Store.OK
}

func (s *Server) sortedProbes() []*probe {
	out := make([]*probe, 0, len(s.probes))
	for _, p := range s.probes {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].model.Name < out[j].model.Name })
	return out
}

// checkStore runs the store check, giving up after a few seconds (a
// stuck database must not hang the probe that would report it).
func (s *Server) checkStore(ctx context.Context) StoreState {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.o.Store(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			s.log.Warn("healthz: the store check failed", "err", err)
			if se, ok := errors.AsType[*StoreError](err); ok {
				return StoreState{Detail: se.Detail}
			}
			return StoreState{Detail: "the database could not be read"}
		}
		return StoreState{OK: true}
	case <-ctx.Done():
		return StoreState{Detail: "the database did not answer within 3s"}
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	rep := s.Check(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if rep.Status != "ok" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(rep)
}
