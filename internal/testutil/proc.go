package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CmdlinesWith lists the command lines of this machine's processes that
// contain s (a secret that must not be there), as "path: args".
func CmdlinesWith(t testing.TB, s string) []string {
	t.Helper()
	paths, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no /proc: %v", err)
	}
	var out []string
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), s) {
			out = append(out, p+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}
