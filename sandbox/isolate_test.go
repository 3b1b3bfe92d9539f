package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/sandbox/bwrap"
)

func TestIsolate(t *testing.T) {
	m := newManager(t, Options{})
	needBwrap(t, m)
	dir := filepath.Join(t.TempDir(), "mcp", "demo")
	home := filepath.Join(dir, "home")
	cmd := exec.Command("sh", "-c", `echo "key=$DEMO_KEY home=$HOME pwd=$(pwd)"; cat /etc/hostname 2>&1; ls /root 2>&1; touch /mnt/user-data/workspace/ok && echo wrote; touch $HOME/h && echo home-writable; tr '\0' ' ' < /proc/1/cmdline; echo; read line; echo "got $line"`)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/root", "DEMO_KEY=s3cret"}
	iso, ok, err := m.Isolate(cmd, bwrap.IsolateOptions{WorkDir: dir, Home: home})
	if err != nil || !ok {
		t.Fatalf("isolate: %v %v", ok, err)
	}
	iso.Cmd.Stdin = strings.NewReader("ping\n")
	got, err := runIsolated(t, iso)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, got)
	}
	for _, want := range []string{"key=s3cret home=/mnt/home pwd=/mnt/user-data/workspace", "wrote", "home-writable", "got ping"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "--args") && (strings.Contains(line, dir) || strings.Contains(line, "s3cret") || strings.Contains(line, "--bind")) {
			t.Errorf("a host path or the key is on the sandbox's command line: %s", line)
		}
	}
	if !strings.Contains(got, "--args 3") {
		t.Errorf("no /proc/1/cmdline in the output:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(home, "h")); err != nil {
		t.Errorf("the private home is not the host dir: %v", err)
	}
}

// A program's directory that holds deerflow's own files (its data dir,
// its configuration with tokens) is shown without them.
func TestIsolateHidesOwnFiles(t *testing.T) {
	root := t.TempDir()
	writeHost(t, filepath.Join(root, "config.yaml"), "bot_token: secret-token\n")
	writeHost(t, filepath.Join(root, "tool.sh"), "echo tool\n")
	m := newManager(t, Options{DataDir: filepath.Join(root, "data"), Hide: []string{filepath.Join(root, "config.yaml")}})
	needBwrap(t, m)
	writeHost(t, filepath.Join(root, "data", "deerflow.db"), "conversations")
	cmd := exec.Command("sh", "-c", "cd "+root+" && sh tool.sh && ls data && cat config.yaml && echo end")
	iso, ok, err := m.Isolate(cmd, bwrap.IsolateOptions{WorkDir: filepath.Join(root, "data", "mcp", "x"), ReadOnly: []string{root}})
	if err != nil || !ok {
		t.Fatalf("isolate: %v %v", ok, err)
	}
	if got, err := runIsolated(t, iso); err != nil || got != "tool\nend\n" {
		t.Errorf("output = %q, %v; want the program's file and nothing of deerflow's", got, err)
	}
}

// runIsolated runs a prepared program the way its owner must (Start,
// Ready, Wait, Release) and returns what it printed.
func runIsolated(t *testing.T, iso *bwrap.Isolated) (string, error) {
	t.Helper()
	var out bytes.Buffer
	iso.Cmd.Stdout, iso.Cmd.Stderr = &out, &out
	if err := iso.Cmd.Start(); err != nil {
		iso.Release()
		t.Fatal(err)
	}
	if err := iso.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := iso.Cmd.Wait()
	iso.Release()
	return out.String(), err
}
