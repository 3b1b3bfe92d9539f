package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// TestJSONLogsNameTheRunAndHoldNoSecrets runs the built binary with
// log.format json at debug level through a turn that logs from several
// layers (a model retry, a failing tool, a Telegram rate limit) and checks
// every line: it is JSON, each line about the turn carries the same run
// id, and neither the bot token nor the API key appears anywhere.
func TestJSONLogsNameTheRunAndHoldNoSecrets(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Script(
		fakeopenai.Turn{Status: 500},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "read_file", Arguments: `{"path":"/mnt/user-data/workspace/missing.txt"}`}}},
		fakeopenai.Turn{Text: "That file does not exist."},
	)
	const apiKey = "sk-live-SECRET-0123456789"
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
log:
  level: debug
  format: json
models:
  - name: default
    model: fake-model
    base_url: `+model.URL+`
    api_key: `+apiKey+`
channels:
  telegram:
    enabled: true
    bot_token: `+tg.Token+`
    api_url: `+tg.URL+`
memory:
  enabled: false
`)
	tg.FailNext("sendMessage", faketelegram.Failure{Code: 429, RetryAfter: 1})
	cmd := exec.Command(binary(t), "serve", "--config", cfg)
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	var stderr faultLog
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	tg.PushMessage(faketelegram.Private(ann, "read missing.txt"))
	waitMessage(t, tg, ann.ID, "That file does not exist.")
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}

	logs := stderr.String()
	for _, secret := range []string{apiKey, tg.Token, strings.SplitN(tg.Token, ":", 2)[1]} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain a secret (%q)", secret)
		}
	}
	runs := map[string]bool{}
	about := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		msg, _ := rec["msg"].(string)
		var kind string
		switch {
		case strings.Contains(msg, "attempt 1 failed, retrying"):
			kind = "model retry"
		case msg == "tool failed":
			kind = "tool"
		case msg == "rate limited by Telegram":
			kind = "rate limit"
		case msg == "send failed":
			kind = "send"
		default:
			continue
		}
		about[kind] = true
		run, _ := rec["run"].(string)
		if !strings.HasPrefix(run, "run_") {
			t.Errorf("a %s line names no run: %s", kind, line)
		}
		runs[run] = true
	}
	for _, kind := range []string{"model retry", "tool"} {
		if !about[kind] {
			t.Errorf("no %s line was logged:\n%s", kind, logs)
		}
	}
	if !about["rate limit"] && !about["send"] {
		t.Errorf("the 429 was not logged:\n%s", logs)
	}
	if len(runs) != 1 {
		t.Errorf("the turn's lines name %d runs: %v", len(runs), runs)
	}
}
