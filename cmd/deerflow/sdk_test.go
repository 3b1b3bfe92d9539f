package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// envSDK names the folder of the LangGraph SDK suite with its node_modules
// installed (.ci/sdk). .ci/run installs it from .ci/sdk/package-lock.json
// and sets this variable; elsewhere the test uses ../../.ci/sdk when its
// node_modules is there, and skips otherwise.
const envSDK = "DEERFLOW_TEST_SDK"

// sdkSubagentPrompt is the prompt the lead gives its subagent in the SDK
// suite's "delegate" run.
const sdkSubagentPrompt = "count the apples for the SDK suite"

// sdkModel scripts the fake model for the SDK suite (.ci/sdk/helpers.mjs
// lists the same behaviours). It decides by the last user message, so
// that the suite's tests can run at once.
func sdkModel(model *fakeopenai.Server, hold chan struct{}) {
	ls := fakeopenai.ToolCall{Name: "ls", Arguments: `{"path":"/mnt/user-data"}`}
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		var user string
		subagent := false
		for _, m := range r.Messages {
			if m.Role == "user" {
				user = m.Content
				subagent = subagent || m.Content == sdkSubagentPrompt
			}
		}
		last := r.Last()
		switch {
		case subagent:
			if last.Role == "tool" {
				return fakeopenai.Turn{Text: "subagent report: 3 apples"}
			}
			return fakeopenai.Turn{Text: "Checking the files.", ToolCalls: []fakeopenai.ToolCall{ls}}
		case len(r.Tools) == 0:
			// Not an agent turn (a title, a summary): answer plainly.
			return fakeopenai.Turn{Text: "echo: " + user}
		case strings.HasPrefix(user, "hold"):
			return fakeopenai.Turn{Text: "never sent", Hold: hold}
		case strings.HasPrefix(user, "slow"):
			return fakeopenai.Turn{Text: "echo: " + user, Chunk: 3, Delay: 150 * time.Millisecond}
		case strings.HasPrefix(user, "use a tool"):
			if last.Role == "tool" {
				return fakeopenai.Turn{Text: "tool done: " + user}
			}
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{ls}}
		case strings.HasPrefix(user, "delegate"):
			if last.Role == "tool" {
				return fakeopenai.Turn{Text: "delegated: " + user}
			}
			args, _ := json.Marshal(map[string]string{"description": "Count the apples", "prompt": sdkSubagentPrompt, "subagent_type": "general-purpose"})
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "task", Arguments: string(args)}}}
		}
		return fakeopenai.Turn{Text: "echo: " + user}
	})
}

// sdkDir is the SDK suite's folder with node_modules installed, or "" with
// why not.
func sdkDir(t *testing.T) (string, string) {
	dir := os.Getenv(envSDK)
	if dir == "" {
		abs, err := filepath.Abs(filepath.Join("..", "..", ".ci", "sdk"))
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", "langgraph-sdk", "package.json")); err != nil {
		if os.Getenv(envSDK) != "" {
			t.Fatalf("%s=%s but the SDK is not installed there: %v", envSDK, dir, err)
		}
		return "", "the SDK is not installed in " + dir + " (bash .ci/run runs `npm ci` there and sets " + envSDK + ")"
	}
	return dir, ""
}

// TestLangGraphSDK runs the client-side suite in .ci/sdk, written against
// LangGraph's JS SDK (@langchain/langgraph-sdk, pinned there) from the
// SDK's and LangGraph Server's documented behaviour, against the real
// binary serving the API with a scripted fake model. Node's output is
// logged line by line; the test fails when the suite does.
func TestLangGraphSDK(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the LangGraph SDK suite needs it (bash .ci/run installs .ci/sdk with npm)")
	}
	dir, why := sdkDir(t)
	if dir == "" {
		t.Skip(why)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.test.mjs in %s: %v", dir, err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}

	model := fakeopenai.New(t)
	sdkModel(model, make(chan struct{})) // hold is never closed: held replies end with the run or the test
	addr := freeAddr(t)
	work := t.TempDir()
	cfg := apiOnlyConfig(t, work, addr, model.URL)
	startBinaryServe(t, work, cfg, "DEERFLOW_API_TOKEN="+apiToken)
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })

	// The suite bounds each test itself (well under a minute in all); this
	// bounds a hung node.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"--test", "--test-reporter=spec", "--test-concurrency=4", "--test-timeout=40000"}, files...)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range cleanEnv() {
		if strings.HasPrefix(kv, "LANGGRAPH_") || strings.HasPrefix(kv, "LANGSMITH_") || strings.HasPrefix(kv, "LANGCHAIN_") || strings.HasPrefix(kv, "NODE_OPTIONS=") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "DEERFLOW_URL=http://"+addr+"/api", "DEERFLOW_TOKEN="+apiToken, "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var summary []string
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		for sc.Scan() {
			line := sc.Text()
			t.Log(line)
			if s := strings.TrimSpace(line); strings.HasPrefix(s, "ℹ ") {
				summary = append(summary, strings.TrimPrefix(s, "ℹ "))
			}
		}
		io.Copy(io.Discard, pr)
	}()
	err = cmd.Wait()
	pw.Close()
	<-done
	if ctx.Err() != nil {
		t.Fatalf("the SDK suite did not finish within the bound: %v", ctx.Err())
	}
	if err != nil {
		t.Fatalf("the LangGraph SDK suite failed (%v): %s; the failing tests are listed above", err, strings.Join(summary, ", "))
	}
}
