package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestLocksLeaveNothing edits one file from many goroutines: every change
// is kept, and no lock entry is left behind once they are done.
func TestLocksLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	l := Loc{Virtual: "/mnt/user-data/workspace", Host: dir, Rel: "todo.txt", Path: "/mnt/user-data/workspace/todo.txt"}
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "todo-%d;", i)
	}
	var lk Locks
	if _, err := Write(&lk, l, b.String(), false); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := Replace(&lk, l, fmt.Sprintf("todo-%d;", i), fmt.Sprintf("done-%d;", i), false); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := Write(&lk, l, "x", true); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := os.ReadFile(filepath.Join(dir, "todo.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "todo-") || strings.Count(string(got), "done-") != 50 || strings.Count(string(got), "x") != 50 {
		t.Errorf("lost edits: %q", got)
	}
	if n := len(lk.m); n != 0 {
		t.Errorf("%d file locks left behind", n)
	}
}
