package logctx

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

func TestContextAttrsReachEveryLine(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Wrap(slog.NewJSONHandler(&buf, nil))).With("component", "bus")
	ctx := With(context.Background(), slog.String("run", "run_1"))
	ctx = With(ctx, slog.String("chat", "telegram:5"))
	log.InfoContext(ctx, "sent")
	log.WithGroup("g").WarnContext(ctx, "grouped", "k", 1)
	log.Info("no context")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines: %q", lines)
	}
	for _, l := range lines[:2] {
		if !strings.Contains(l, `"run_1"`) || !strings.Contains(l, `"telegram:5"`) || !strings.Contains(l, `"component":"bus"`) {
			t.Errorf("line lacks the context's attributes: %s", l)
		}
	}
	if strings.Contains(lines[2], "run_1") {
		t.Errorf("a line without the context got them: %s", lines[2])
	}
}

func TestCredentialsInURLsAreMasked(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Wrap(slog.NewTextHandler(&buf, nil))).With("base_url", "https://user:pass@host/v1?key=abc")
	u, _ := url.Parse("https://host/x?api_key=k2")
	err := &url.Error{Op: "Get", URL: "https://llm/v1?access_token=k3", Err: errors.New("refused")}
	log.Info("calling https://u:k4@h/", "err", err, "u", u, slog.Group("g", "mcp", "http://h/?token=k5"), "plain", "nothing")
	got := buf.String()
	for _, secret := range []string{"pass", "abc", "k2", "k3", "k4", "k5"} {
		if strings.Contains(got, secret) {
			t.Errorf("the line leaks %q: %s", secret, got)
		}
	}
	for _, want := range []string{"https://user:***@host/v1?key=***", "api_key=***", "access_token=***", "u:***@h", "token=***", "plain=nothing"} {
		if !strings.Contains(got, want) {
			t.Errorf("the line lacks %q: %s", want, got)
		}
	}
}
