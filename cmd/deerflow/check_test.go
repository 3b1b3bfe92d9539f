package main

import (
	"context"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/documents"
)

// deerflow check prints a model's base_url without the credentials in it.
func TestCheckRedactsURLCredentials(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Skills.Path = t.TempDir()
	cfg.Models = []config.Model{{Name: "main", Model: "m", BaseURL: "https://user:pass-SECRET@llm.example/v1?key=abc-SECRET&api-version=2"}}
	var out strings.Builder
	if code := check(context.Background(), cfg, "", &out); code != 0 {
		t.Fatalf("check: exit %d:\n%s", code, out.String())
	}
	if strings.Contains(out.String(), "SECRET") {
		t.Errorf("check printed a credential:\n%s", out.String())
	}
	if want := "https://user:***@llm.example/v1?key=***&api-version=2"; !strings.Contains(out.String(), want) {
		t.Errorf("check output lacks %s:\n%s", want, out.String())
	}
}

// deerflow check prints the send limits in force for each enabled channel,
// 0 as no limit of ours, and nothing for a disabled one.
func TestCheckPrintsLimits(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Skills.Path = t.TempDir()
	cfg.Channels.Telegram.Enabled = true
	cfg.Channels.Telegram.Limits.PerChatPerSecond = 0
	cfg.Channels.Slack.Enabled = true
	var out strings.Builder
	if code := check(context.Background(), cfg, "", &out); code != 0 {
		t.Fatalf("check: exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{
		"telegram limits: no limit of ours per chat, 20/min per group, 30/s overall",
		"slack limits: 1/s per chat in bursts of 3, no limit of ours overall",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "lark limits") {
		t.Errorf("check printed limits of a disabled channel:\n%s", out.String())
	}
}

// deerflow check says whether tasks can be scheduled, and within what.
func TestCheckPrintsScheduler(t *testing.T) {
	for _, tt := range []struct {
		enabled bool
		want    string
	}{
		{true, "on: runs at least 60 s apart, 20 tasks per person, paused after 3 failed runs in a row, cron in UTC unless a task names its zone"},
		{false, "off (scheduler.enabled: false)"},
	} {
		cfg := config.Default()
		cfg.DataDir = t.TempDir()
		cfg.Skills.Path = t.TempDir()
		cfg.Scheduler.Enabled = tt.enabled
		var out strings.Builder
		if code := check(context.Background(), cfg, "", &out); code != 0 {
			t.Fatalf("check: exit %d:\n%s", code, out.String())
		}
		if !strings.Contains(out.String(), tt.want) {
			t.Errorf("check output lacks %q:\n%s", tt.want, out.String())
		}
	}
}

// deerflow check says how uploads are converted and whether voice is on,
// lists the agents and which bot answers as which, and refuses a binding
// to an agent that does not exist, naming the key.
func TestCheckPrintsUploadsVoiceAndAgents(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Skills.Path = t.TempDir()
	cfg.Transcription = config.Transcription{Model: "whisper-1", BaseURL: "https://user:pw@stt.example/v1", APIKey: "sk-secret", TimeoutSeconds: 120, MaxMB: 25}
	cfg.Agents = []config.AgentDef{{Name: "coder", Description: "Writes code", Memory: "own"}}
	cfg.Channels.Telegram.Enabled, cfg.Channels.Telegram.BotToken, cfg.Channels.Telegram.Agent = true, "1:x", "coder"
	var out strings.Builder
	if code := check(context.Background(), cfg, "", &out); code != 0 {
		t.Fatalf("check: exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{
		"PDF, Word, Excel, PowerPoint, CSV and HTML converted to Markdown (PDF with " + documents.PDFExtractor() + "), up to 50 MB and 60 s per file",
		"transcribed by whisper-1 at https://user:***@stt.example/v1, with an API key",
		"coder: Writes code; the default model, own memory",
		"telegram answers as coder",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "sk-secret") || strings.Contains(out.String(), ":pw@") {
		t.Errorf("check showed a secret:\n%s", out.String())
	}
	cfg.Channels.Telegram.ChatAgents = map[string]string{"-5": "ghost"}
	out.Reset()
	if code := check(context.Background(), cfg, "", &out); code != 1 || !strings.Contains(out.String(), `channels.telegram.chat_agents.-5: no agent called "ghost" in agents`) {
		t.Errorf("check with a binding to no agent: exit %d:\n%s", code, out.String())
	}
}
