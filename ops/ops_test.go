package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deerflow/deerflow/metrics"
)

const secret = "sk-test-very-secret-key"

// modelServer is a provider answering GET /v1/models with status.
type modelServer struct {
	*httptest.Server
	probes atomic.Int32
	auth   atomic.Value // the last Authorization header
}

func newModelServer(t *testing.T, status int) *modelServer {
	ms := &modelServer{}
	ms.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		ms.probes.Add(1)
		ms.auth.Store(r.Header.Get("Authorization"))
		w.WriteHeader(status)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+secret+`"}}`)
	}))
	t.Cleanup(ms.Close)
	return ms
}

// get fetches path from h and returns the status and body.
func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

func healthz(t *testing.T, s *Server) (int, Report, string) {
	t.Helper()
	code, body := get(t, s.Handler(), "/healthz")
	var r Report
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("/healthz is not JSON: %v\n%s", err, body)
	}
	return code, r, body
}

func channel(name string, connected bool, detail string) Channel {
	return Channel{Name: name, Health: func() ChannelHealth {
		return ChannelHealth{Connected: connected, Detail: detail, Since: time.Now()}
	}}
}

func TestHealthzOK(t *testing.T) {
	ms := newModelServer(t, 200)
	s := New(Options{
		Channels: []Channel{channel("telegram", true, "polling"), channel("slack", true, "socket mode connected")},
		Store:    func(context.Context) error { return nil },
		Models:   []Model{{Name: "default", BaseURL: ms.URL + "/v1/", APIKey: secret}},
	})
	code, r, body := healthz(t, s)
	if code != 200 || r.Status != "ok" {
		t.Fatalf("/healthz = %d:\n%s", code, body)
	}
	if !r.Channels["telegram"].Connected || r.Channels["slack"].Detail != "socket mode connected" || r.Channels["slack"].Since == nil {
		t.Errorf("channels: %+v", r.Channels)
	}
	if r.Store == nil || !r.Store.OK {
		t.Errorf("store: %+v", r.Store)
	}
	if m := r.Models["default"]; !m.Reachable {
		t.Errorf("model: %+v", m)
	}
	if got := ms.auth.Load(); got != "Bearer "+secret {
		t.Errorf("the probe sent Authorization %q", got)
	}
	if strings.Contains(body, secret) {
		t.Error("/healthz shows the API key")
	}
}

func TestHealthzDegraded(t *testing.T) {
	closed := closedURL(t)
	tests := []struct {
		name string
		opts Options
		want []string // in the body
	}{
		{"channel down", Options{Channels: []Channel{channel("telegram", true, ""), channel("slack", false, "connection failed (HTTP 500); retrying")}},
			[]string{`"slack": {`, `"connected": false`, "connection failed (HTTP 500)"}},
		{"store", Options{Store: func(context.Context) error { return errors.New("database not open") }},
			[]string{`"ok": false`, "the database could not be read"}},
		{"store detail", Options{Store: func(context.Context) error {
			return fmt.Errorf("check: %w", &StoreError{Detail: "the disk holding /data is full", Err: errors.New("store: no space left")})
		}}, []string{`"ok": false`, `"detail": "the disk holding /data is full"`}},
		{"model unreachable", Options{Models: []Model{{Name: "default", BaseURL: closed, APIKey: secret}}},
			[]string{`"reachable": false`, "unreachable: ", "connection refused"}},
		{"key rejected", Options{Models: []Model{{Name: "default", BaseURL: newModelServer(t, 401).URL + "/v1", APIKey: secret}}},
			[]string{`"reachable": false`, "rejected the API key (HTTP 401)"}},
		{"server error", Options{Models: []Model{{Name: "default", BaseURL: newModelServer(t, 502).URL + "/v1", APIKey: secret}}},
			[]string{`"reachable": false`, "server error (HTTP 502)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, r, body := healthz(t, New(tt.opts))
			if code != http.StatusServiceUnavailable || r.Status != "degraded" {
				t.Errorf("/healthz = %d %q, want 503 degraded", code, r.Status)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("/healthz lacks %q:\n%s", w, body)
				}
			}
			if strings.Contains(body, secret) {
				t.Error("/healthz shows the API key")
			}
		})
	}
}

// A 404 (no /models route, as on some gateways) still proves the provider
// is there.
func TestProbeAnyAnswerBelow500(t *testing.T) {
	ms := newModelServer(t, 200)
	s := New(Options{Models: []Model{{Name: "m", BaseURL: ms.URL + "/other"}}})
	if code, r, _ := healthz(t, s); code != 200 || !r.Models["m"].Reachable || !strings.Contains(r.Models["m"].Detail, "HTTP 404") {
		t.Errorf("/healthz = %d %+v", code, r.Models)
	}
}

func TestProbeIsCached(t *testing.T) {
	ms := newModelServer(t, 200)
	s := New(Options{Models: []Model{{Name: "default", BaseURL: ms.URL + "/v1", APIKey: secret}}})
	for range 3 {
		if code, _, _ := healthz(t, s); code != 200 {
			t.Fatalf("/healthz = %d", code)
		}
	}
	if n := ms.probes.Load(); n != 1 {
		t.Errorf("%d probes for 3 checks within the cache time, want 1", n)
	}
}

// Concurrent checks share one probe: it is never run twice at once.
func TestProbesNeverOverlap(t *testing.T) {
	arrived, release := make(chan struct{}, 16), make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		arrived <- struct{}{}
		<-release
	}))
	defer srv.Close()
	s := New(Options{Models: []Model{{Name: "default", BaseURL: srv.URL}}, ProbeTimeout: time.Minute})
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { s.Check(context.Background()) })
	}
	<-arrived
	close(release)
	wg.Wait()
	if got := n.Load(); got != 1 {
		t.Errorf("%d probes for 5 concurrent checks, want 1", got)
	}
}

// A recent real model call stands for the model: no probe is made.
func TestRecentRealCallSkipsProbe(t *testing.T) {
	ms := newModelServer(t, 200)
	m := metrics.New()
	s := New(Options{Metrics: m, Models: []Model{{Name: "default", BaseURL: ms.URL + "/v1"}}})
	m.ModelCall("default", metrics.Unreachable, time.Second, 0, 0)
	code, r, _ := healthz(t, s)
	if code != 503 || r.Models["default"].Reachable || !strings.Contains(r.Models["default"].Detail, "unreachable") {
		t.Errorf("after a failed real call: %d %+v", code, r.Models)
	}
	m.ModelCall("default", metrics.OK, time.Second, 10, 5)
	code, r, _ = healthz(t, s)
	if code != 200 || !r.Models["default"].Reachable || !strings.HasPrefix(r.Models["default"].Detail, "answered") {
		t.Errorf("after a good real call: %d %+v", code, r.Models)
	}
	if n := ms.probes.Load(); n != 0 {
		t.Errorf("%d probes despite recent real calls", n)
	}
}

func TestMetricsAndOtherPaths(t *testing.T) {
	m := metrics.New()
	m.Channel("lark").Inbound()
	s := New(Options{Metrics: m})
	code, body := get(t, s.Handler(), "/metrics")
	if code != 200 || !strings.Contains(body, `deerflow_inbound_messages_total{channel="lark"} 1`) {
		t.Errorf("/metrics = %d:\n%s", code, body)
	}
	for _, p := range []string{"/", "/debug/pprof/", "/healthz/x", "/metricsx"} {
		if code, _ := get(t, s.Handler(), p); code != 404 {
			t.Errorf("%s = %d, want 404", p, code)
		}
	}
	if code, _ := get(t, New(Options{}).Handler(), "/metrics"); code != 404 {
		t.Errorf("/metrics without Metrics = %d, want 404", code)
	}
}

func TestStartServeShutdown(t *testing.T) {
	s := New(Options{Addr: "127.0.0.1:0", Channels: []Channel{channel("telegram", true, "")}})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + s.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz over HTTP = %d", resp.StatusCode)
	}
	taken := New(Options{Addr: s.Addr()})
	if err := taken.Start(); err == nil || !strings.Contains(err.Error(), "http.listen "+s.Addr()) {
		t.Errorf("listening on a taken port: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + s.Addr() + "/healthz"); err == nil {
		t.Error("still serving after Shutdown")
	}
	var never *Server
	if err := never.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// closedURL is a base URL on a port nothing listens on.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}
