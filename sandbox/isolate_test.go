package sandbox

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsolate(t *testing.T) {
	m := newManager(t, Options{})
	needBwrap(t, m)
	dir := filepath.Join(t.TempDir(), "mcp", "demo")
	cmd := exec.Command("sh", "-c", `echo "key=$DEMO_KEY home=$HOME pwd=$(pwd)"; cat /etc/hostname 2>&1; ls /root 2>&1; touch /mnt/user-data/workspace/ok && echo wrote; read line; echo "got $line"`)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/root", "DEMO_KEY=s3cret"}
	iso, ok, err := m.Isolate(cmd, dir)
	if err != nil || !ok {
		t.Fatalf("isolate: %v %v", ok, err)
	}
	iso.Stdin = strings.NewReader("ping\n")
	out, err := iso.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"key=s3cret home=/mnt/user-data/workspace pwd=/mnt/user-data/workspace", "wrote", "got ping"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, dir) {
		t.Errorf("the host path leaked:\n%s", got)
	}
}
