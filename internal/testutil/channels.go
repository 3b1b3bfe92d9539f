package testutil

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
)

// Publisher is a bus.Publisher that accepts every message onto Got.
type Publisher struct{ Got chan *bus.Inbound }

// Publish implements bus.Publisher.
func (p Publisher) Publish(_ context.Context, in *bus.Inbound) error {
	p.Got <- in
	return nil
}

// StartsRun implements bus.Publisher: no command starts a run.
func (Publisher) StartsRun(string) bool { return false }

// Wait receives from ch, failing the test after 10 s (a bound, not a
// timing assertion).
func Wait[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// Goroutines counts the goroutines with fn on their stack.
func Goroutines(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}
