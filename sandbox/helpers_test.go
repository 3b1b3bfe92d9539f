package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/tools"
)

// newManager returns a Manager over a fresh data dir.
func newManager(t testing.TB, o Options) *Manager {
	t.Helper()
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// needBwrap skips t when bash cannot run under bubblewrap here.
func needBwrap(t testing.TB, m *Manager) {
	t.Helper()
	if m.runner().mode != bashBwrap {
		_, how := m.BashStatus()
		t.Skipf("bubblewrap sandbox unavailable (%s); install it with apt-get install -y bubblewrap", how)
	}
}

// call runs tool name for thread id with args (a value marshalled to JSON).
func call(t testing.TB, m *Manager, id, name string, args any) (string, error) {
	t.Helper()
	return callCtx(context.Background(), t, m, id, name, args)
}

func callCtx(ctx context.Context, t testing.TB, m *Manager, id, name string, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx = tools.WithEnv(ctx, &tools.Env{ThreadID: id})
	return tools.NewRegistry(m.Tools()...).Call(ctx, name, raw)
}

// mustCall is call that fails the test on error.
func mustCall(t testing.TB, m *Manager, id, name string, args any) string {
	t.Helper()
	out, err := call(t, m, id, name, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

// hostDir is where thread id's virtual dir (workspace, uploads, outputs)
// lives on the host, created.
func hostDir(t testing.TB, m *Manager, id, dir string) string {
	t.Helper()
	th, err := m.thread(id)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(th.userData, dir)
}

func writeHost(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// noHostPath fails t when s mentions one of the host paths.
func noHostPath(t testing.TB, s string, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		if h != "" && strings.Contains(s, h) {
			t.Errorf("host path %q leaked in %q", h, s)
		}
	}
}
