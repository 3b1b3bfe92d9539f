package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
)

// envEverything names the reference MCP server of the protocol's own
// project, @modelcontextprotocol/server-everything, installed the usual
// way: `npm install` into a project, run from its node_modules/.bin (a
// link to a `#!/usr/bin/env node` script). .ci/run installs it from
// .ci/mcp/package.json and sets this variable; elsewhere the test skips.
const envEverything = "DEERFLOW_TEST_MCP_EVERYTHING"

// TestRealMCPServerSandboxed runs that server, unmodified, in the sandbox:
// its program lives outside the system directories, its key is handed over
// in the environment and never shows on a command line, and its tools
// answer.
func TestRealMCPServerSandboxed(t *testing.T) {
	bin := os.Getenv(envEverything)
	if bin == "" {
		t.Skipf("%s is not set (bash .ci/run installs the server and sets it)", envEverything)
	}
	needBwrap(t)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v", envEverything, err)
	}
	const key = "everything-key-5b1f0c"
	cfg := testConfig(t, fakeopenai.New(t), t.TempDir())
	cfg.MCP.Servers = []config.MCPServer{{Name: "everything", Command: bin, Args: []string{"stdio"}, Env: map[string]string{"EVERYTHING_KEY": key}}}
	s := startChat(t, cfg)
	waitTool(t, s.app.tools, "everything_echo")
	got, err := callTool(t, s.app.tools, "everything_echo", `{"message":"hello from deerflow"}`)
	if err != nil || !strings.Contains(got, "hello from deerflow") {
		t.Fatalf("everything_echo = %q, %v", got, err)
	}
	env, err := callTool(t, s.app.tools, "everything_get-env", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	for _, want := range []string{key, `"HOME": "/mnt/home"`} {
		if !strings.Contains(env, want) {
			t.Errorf("the server's environment lacks %s:\n%s", want, env)
		}
	}
	if home != "" && strings.Contains(env, `"HOME": "`+home+`"`) {
		t.Errorf("the server sees the host's home:\n%s", env)
	}
	if lines := testutil.CmdlinesWith(t, key); len(lines) > 0 {
		t.Errorf("the key is on a command line: %q", lines)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "mcp", "everything", "home")); err != nil {
		t.Errorf("no private home for the server: %v", err)
	}
}
