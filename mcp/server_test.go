package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment of the test binary run as an MCP server over stdio.
const (
	envServer   = "DEERFLOW_MCP_TEST_SERVER"   // set: be the server
	envStubborn = "DEERFLOW_MCP_TEST_STUBBORN" // set: ignore SIGTERM and stdin's end
	envState    = "DEERFLOW_MCP_TEST_STATE"    // a file: offer "extra" instead of "add" once it exists
	envFail     = "DEERFLOW_MCP_TEST_FAIL"     // set: print it ($VARs expanded) to stderr and exit 2 at once
)

func TestMain(m *testing.M) {
	if os.Getenv(envServer) != "" {
		os.Exit(serveStdio())
	}
	os.Exit(m.Run())
}

func serveStdio() int {
	fmt.Fprintln(os.Stderr, "test server starting")
	if msg := os.Getenv(envFail); msg != "" {
		fmt.Fprintln(os.Stderr, os.ExpandEnv(msg))
		return 2
	}
	stubborn := os.Getenv(envStubborn) != ""
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	extra := false
	if p := os.Getenv(envState); p != "" {
		if _, err := os.Stat(p); err == nil {
			extra = true
		} else {
			_ = os.WriteFile(p, []byte("started"), 0o600)
		}
	}
	err := newTestServer(true, extra).Run(context.Background(), &sdk.StdioTransport{})
	if stubborn {
		select {} // only a kill ends it
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type sleepIn struct {
	Ms int `json:"ms"`
}

type getenvIn struct {
	Name string `json:"name"`
}

// newTestServer offers echo, add (or extra), fail, sleep, getenv and, if
// crash, crash.
func newTestServer(crash, extra bool) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	if extra {
		sdk.AddTool(s, &sdk.Tool{Name: "extra", Description: "Only after a restart."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "extra"}}}, nil, nil
			})
	} else {
		sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Add two numbers."},
			func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
				res := &sdk.CallToolResult{Content: []sdk.Content{
					&sdk.TextContent{Text: "a+b"},
					&sdk.ImageContent{Data: []byte("png"), MIMEType: "image/png"},
				}}
				return res, addOut{Sum: in.A + in.B}, nil
			})
	}
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("it failed on purpose")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sleep", Description: "Sleep a while."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in sleepIn) (*sdk.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "slept"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "getenv", Description: "Read an environment variable."},
		func(_ context.Context, _ *sdk.CallToolRequest, in getenvIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "[" + os.Getenv(in.Name) + "]"}}}, nil, nil
		})
	if crash {
		sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exit at once."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				os.Exit(3)
				return nil, nil, nil
			})
	}
	return s
}

// logBuf collects the manager's log; shown when a test fails.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func testLogger(t *testing.T) (*slog.Logger, *logBuf) {
	lb := &logBuf{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager log:\n%s", lb)
		}
	})
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}

// stdioServer is the test binary as a server named name.
func stdioServer(t *testing.T, name string, env map[string]string) Server {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: a race-enabled binary otherwise sleeps a second on exit.
	e := map[string]string{envServer: "1", "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		e[k] = v
	}
	return Server{Name: name, Command: exe, Args: []string{"-test.run=^$"}, Env: e}
}

// waitFor polls cond until it holds or fails the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustContain(t *testing.T, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("got %q, want it to contain %q", got, want)
	}
}
