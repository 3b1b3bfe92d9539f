package logctx

import (
	"bytes"
	"context"
	"log/slog"
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
