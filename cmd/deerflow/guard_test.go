package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/tools"
)

type flakyArgs struct {
	N int `json:"n"`
}

// TestChatToolGuards runs `deerflow chat` against the fake model through
// the three tool guards: a huge result reaches the model cut in the
// middle, a tool failing the same way three times is switched off, and
// write_file on a file the run has not read is refused until it reads it.
func TestChatToolGuards(t *testing.T) {
	var huge strings.Builder
	for i := 1; i <= 12000; i++ {
		fmt.Fprintf(&huge, "row %d\n", i)
	}
	hugeTool := tools.Func("huge", "Returns a lot.", func(context.Context, struct{}) (string, error) { return huge.String(), nil })
	flaky := tools.Func("flaky", "Always fails.", func(_ context.Context, in flakyArgs) (string, error) {
		return "", fmt.Errorf("upstream 10.0.0.%d refused the connection", in.N)
	})
	call := func(name, args string) fakeopenai.Turn {
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: name, Arguments: args}}}
	}
	const file = `"path":"/mnt/user-data/workspace/notes.md"`
	fake := fakeopenai.New(t)
	fake.Key = "test-key"
	fake.Script(
		call("huge", `{}`),
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "flaky", Arguments: `{"n":1}`}, {Name: "flaky", Arguments: `{"n":2}`}, {Name: "flaky", Arguments: `{"n":3}`}}},
		call("flaky", `{"n":4}`),
		call("write_file", `{`+file+`,"content":"v1\n"}`), // a new file
		fakeopenai.Turn{Text: "first done"},
		// The next message is a new run, which has not seen notes.md.
		call("write_file", `{`+file+`,"content":"v2\n"}`),
		call("read_file", `{`+file+`}`),
		call("write_file", `{`+file+`,"content":"v2\n"}`),
		fakeopenai.Turn{Text: "second done"},
	)
	s := startChat(t, testConfig(t, fake, t.TempDir()), hugeTool, flaky)
	s.say("go")
	s.screen.waitFor(t, "first done", 1)
	s.say("again")
	s.screen.waitFor(t, "second done", 1)
	s.close()
	checkGuards(t, fake.Requests())
}

// checkGuards checks what TestChatToolGuards's model was sent.
func checkGuards(t *testing.T, reqs []fakeopenai.Request) {
	t.Helper()
	if len(reqs) != 9 {
		t.Fatalf("model got %d requests", len(reqs))
	}
	got := reqs[1].Last().Content
	if n := len(got); n > 21_000 || !strings.HasPrefix(got, "row 1\n") || !strings.HasSuffix(strings.TrimSpace(got), "row 12000") ||
		!strings.Contains(got, "characters were cut from the middle of this result") {
		t.Errorf("huge result reached the model as %d bytes: %.200s … %.300s", n, got, got[len(got)/2-150:])
	}
	// The three failures ran in parallel: whichever ended last says so.
	off := 0
	for _, m := range reqs[2].Messages[len(reqs[2].Messages)-3:] {
		if !strings.Contains(m.Content, "refused the connection") {
			t.Errorf("failure reached the model as %q", m.Content)
		}
		if strings.Contains(m.Content, "switched off for the rest of this run") {
			off++
		}
	}
	if off != 1 {
		t.Errorf("%d of three failures say the tool is switched off, want 1", off)
	}
	if got := reqs[3].Last().Content; !strings.HasPrefix(got, "Error: flaky is switched off for the rest of this run") {
		t.Errorf("call after the breaker: %q", got)
	}
	for i, want := range map[int]string{
		4: "Wrote 3 bytes",
		6: "write_file was not run: /mnt/user-data/workspace/notes.md already exists (3 bytes, 1 lines) and you have not read it in this run",
		7: "v1",
		8: "Wrote 3 bytes",
	} {
		if got := reqs[i].Last().Content; !strings.Contains(got, want) {
			t.Errorf("request %d ends with %q, want %q in it", i, got, want)
		}
	}
	if got := reqs[6].Last().Content; !strings.Contains(got, "```\nv1\n```") {
		t.Errorf("refusal does not show the file: %q", got)
	}
}
