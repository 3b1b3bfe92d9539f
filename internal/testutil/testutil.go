// Package testutil holds helpers shared by the tests of several packages.
package testutil

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/deerflow/deerflow/store"
)

// Store returns a new store in a temporary directory, closed when the test
// ends.
func Store(tb testing.TB) *store.Store {
	tb.Helper()
	st, err := store.Open(filepath.Join(tb.TempDir(), "deerflow.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// WaitFor polls cond until it holds, failing the test after 10 seconds.
func WaitFor(tb testing.TB, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatal("condition not reached")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
