package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/tools"
)

// memServer serves each connection with a new session of srv over an
// in-memory pipe, so that a test runs in a synctest bubble. While gate
// is open (not closed), connecting waits.
type memServer struct {
	srv *sdk.Server

	mu       sync.Mutex
	gate     chan struct{}
	sessions []*sdk.ServerSession
}

func newMemServer(gated bool) *memServer {
	ms := &memServer{srv: newTestServer(false, false)}
	if gated {
		ms.gate = make(chan struct{})
	}
	return ms
}

func (ms *memServer) transport(Server) sdk.Transport { return ms }

func (ms *memServer) Connect(ctx context.Context) (sdk.Connection, error) {
	ms.mu.Lock()
	gate := ms.gate
	ms.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := ms.srv.Connect(context.Background(), st, nil)
	if err != nil {
		return nil, err
	}
	ms.mu.Lock()
	ms.sessions = append(ms.sessions, ss)
	ms.mu.Unlock()
	return ct.Connect(ctx)
}

func (ms *memServer) open() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gate != nil {
		close(ms.gate)
		ms.gate = nil
	}
}

// drop ends every session from the server's side.
func (ms *memServer) drop() {
	ms.mu.Lock()
	ss := ms.sessions
	ms.sessions = nil
	ms.mu.Unlock()
	for _, s := range ss {
		s.Close()
	}
}

func memManager(ms *memServer, s Server) (*Manager, *tools.Registry) {
	m := New(Options{Servers: []Server{s}, RestartBackoff: time.Second})
	m.testTransport = ms.transport
	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	return m, reg
}

func memCall(reg *tools.Registry, name, args string) (string, error) {
	return reg.Call(context.Background(), name, json.RawMessage(args))
}

func TestHungCallTimesOutAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := newMemServer(false)
		m, reg := memManager(ms, Server{Name: "mem", URL: "http://unused", Timeout: 5 * time.Second})
		synctest.Wait()
		if _, ok := reg.Get("mem_echo"); !ok {
			t.Fatalf("tools: %v", reg.Names())
		}
		start := time.Now()
		hung := make(chan error, 1)
		go func() {
			_, err := memCall(reg, "mem_sleep", `{"ms":3600000}`)
			hung <- err
		}()
		for i := range 3 { // the server's other tools answer meanwhile
			time.Sleep(time.Second)
			if out, err := memCall(reg, "mem_echo", `{"text":"x"}`); err != nil || out != "x" {
				t.Fatalf("echo %d while a call hangs: %q, %v", i, out, err)
			}
		}
		err := <-hung
		if err == nil || !strings.Contains(err.Error(), "timed out after 5s without an answer from MCP server mem") {
			t.Fatalf("hung call: %v", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("the call gave up after %s, want the server's 5s", d)
		}
		if out, err := memCall(reg, "mem_add", `{"a":1,"b":2}`); err != nil || !strings.Contains(out, `"sum":3`) {
			t.Errorf("add after the timeout: %q, %v", out, err)
		}
		if st := m.States()[0]; st.Phase != Ready || st.Tools != 5 {
			t.Errorf("state after the timeout: %+v", st)
		}
		m.Close()
		ms.drop()
	})
}

func TestStatesAndStandIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := newMemServer(true)
		m, reg := memManager(ms, Server{Name: "mem", Command: "npx", Timeout: 30 * time.Second})
		synctest.Wait()
		t0 := time.Now()
		want := []State{{Name: "mem", Transport: "stdio", Phase: Connecting, Since: t0}}
		if diff := cmp.Diff(want, m.States()); diff != "" {
			t.Errorf("while connecting (-want +got):\n%s", diff)
		}
		si, ok := reg.Get("mem_connecting")
		if !ok || reg.Len() != 1 {
			t.Fatalf("while connecting the model is offered %v", reg.Names())
		}
		mustContain(t, si.Spec().Description, "MCP server mem is still connecting (its tools appear when ready)")
		if diff := cmp.Diff([]string{"MCP server mem is still connecting (its tools appear when ready)"}, m.Health()); diff != "" {
			t.Errorf("health: %s", diff)
		}
		mustContain(t, m.Note(), "mem is still connecting")

		// A call of the stand-in waits for the server (npx downloading).
		waited := make(chan string, 1)
		go func() { out, _ := memCall(reg, "mem_connecting", `{}`); waited <- out }()
		time.Sleep(10 * time.Second)
		ms.open()
		synctest.Wait()
		mustContain(t, <-waited, "MCP server mem is running now")
		if _, ok := reg.Get("mem_connecting"); ok {
			t.Error("the stand-in is still offered once the tools are")
		}
		want[0].Phase, want[0].Tools, want[0].Since = Ready, 5, t0.Add(10*time.Second)
		if diff := cmp.Diff(want, m.States()); diff != "" {
			t.Errorf("ready (-want +got):\n%s", diff)
		}
		if h := m.Health(); len(h) != 0 || m.Note() != "" {
			t.Errorf("health when ready: %q", h)
		}
		m.Close()
		if st := m.States()[0]; st.Phase != Stopped {
			t.Errorf("after Close: %+v", st)
		}
		ms.drop()
	})
}

func TestDropAndReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := newMemServer(false)
		m, reg := memManager(ms, Server{Name: "mem", URL: "http://unused"})
		synctest.Wait()
		ms.drop()
		synctest.Wait()
		st := m.States()[0]
		if st.Phase != Failed || !strings.Contains(st.Err, "the connection closed") {
			t.Errorf("after a drop: %+v", st)
		}
		mustContain(t, strings.Join(m.Health(), "\n"), "MCP server mem is down: the connection closed")
		time.Sleep(time.Second)
		synctest.Wait()
		if st := m.States()[0]; st.Phase != Ready || st.Tools != 5 {
			t.Errorf("after the backoff: %+v", st)
		}
		if out, err := memCall(reg, "mem_echo", `{"text":"back"}`); err != nil || out != "back" {
			t.Errorf("echo after reconnecting: %q, %v", out, err)
		}
		m.Close()
		ms.drop()
	})
}

func TestConnectTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := newMemServer(true) // never opens
		m, reg := memManager(ms, Server{Name: "slow", URL: "http://unused", Timeout: 2 * time.Second})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		st := m.States()[0]
		want := State{Name: "slow", Transport: "http", Phase: Failed, Err: "MCP server slow could not be reached: no answer within 2s"}
		if diff := cmp.Diff(want, st, cmpopts.IgnoreFields(State{}, "Since")); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		si, ok := reg.Get("slow_unavailable")
		if !ok || reg.Len() != 1 {
			t.Fatalf("tools: %v", reg.Names())
		}
		mustContain(t, si.Spec().Description, "MCP server slow is down")
		mustContain(t, m.Note(), "slow is down (call slow_unavailable to learn why)")
		if _, err := memCall(reg, "slow_unavailable", `{}`); err == nil || !strings.Contains(err.Error(), "no answer within 2s") {
			t.Errorf("stand-in: %v", err)
		}
		m.Close()
	})
}

func TestTransportInferred(t *testing.T) {
	for _, tt := range []struct {
		s    Server
		want string
	}{
		{Server{Command: "x"}, "stdio"},
		{Server{URL: "http://h"}, "http"},
		{Server{URL: "http://h", Transport: "sse"}, "sse"},
		{Server{}, ""},
	} {
		if got := tt.s.transport(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestNilManagerStates(t *testing.T) {
	var m *Manager // no servers configured
	if m.States() != nil || m.Health() != nil || m.Note() != "" {
		t.Error("a nil Manager has states")
	}
}
