package testutil

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// GoBuild compiles the Go program pkg (an import path, such as
// github.com/deerflow/deerflow/internal/fakeacp) into a directory of the
// test's own and returns the binary's path.
func GoBuild(tb testing.TB, pkg string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		tb.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
}
