package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// pipeChat is `printf input | deerflow chat`: what it printed on stdout
// and stderr, and its exit code.
func pipeChat(t *testing.T, fake *fakeopenai.Server, input string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := chat(context.Background(), testConfig(t, fake, t.TempDir()), strings.NewReader(input), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestChatPipeAnswersInOrder(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(fakeopenai.Turn{Text: "answer one"}, fakeopenai.Turn{Text: "answer two"})
	out, errs, code := pipeChat(t, fake, "q1\nq2\n")
	if out != "answer one\nanswer two\n" || code != 0 {
		t.Fatalf("stdout %q, exit code %d, stderr:\n%s", out, code, errs)
	}
	reqs := fake.Requests()
	if got := reqs[1].Roles(); got != "system,user,assistant,user" || reqs[1].Last().Content != "q2" {
		t.Errorf("the second question was asked with %s", got)
	}
}

func TestChatPipeFailureExitsNonZero(t *testing.T) {
	fake := fakeopenai.New(t)
	// Three 500s exhaust the two retries.
	fake.Script(fakeopenai.Turn{Status: 500}, fakeopenai.Turn{Status: 500}, fakeopenai.Turn{Status: 500})
	out, errs, code := pipeChat(t, fake, "q1\n")
	if code == 0 || out != "" {
		t.Errorf("stdout %q, exit code %d", out, code)
	}
	if !strings.Contains(errs, "The model provider is having trouble right now") {
		t.Errorf("stderr lacks the sentence:\n%s", errs)
	}
}

func TestChatPipeRetryPrintsAnswerOnce(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(
		fakeopenai.Turn{Text: "The answer is forty-two, said the model.", CutAfter: 3},
		fakeopenai.Turn{Text: "The answer is forty-two, said the model."},
	)
	out, errs, code := pipeChat(t, fake, "what is the answer?\n")
	if out != "The answer is forty-two, said the model.\n" || code != 0 {
		t.Errorf("stdout %q, exit code %d, stderr:\n%s", out, code, errs)
	}
}

// Tool lines go to stderr, so stdout is the answer alone; /help (with
// /exit) is an answer too.
func TestChatPipeToolLinesOnStderr(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "weather", Arguments: `{"city":"Oslo"}`}}},
		fakeopenai.Turn{Text: "Oslo is sunny."},
	)
	a, err := newApp(testConfig(t, fake, t.TempDir()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.shutdown(0)
	a.tools.Add(weatherTool())
	var out, errb bytes.Buffer
	if err := converse(context.Background(), a, strings.NewReader("weather?\n/help\n"), &out, &errb, false); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "Oslo is sunny.\nSend me a message") || !strings.HasSuffix(got, "/exit — leave the chat (or Ctrl-D)\n") {
		t.Errorf("stdout:\n%s", got)
	}
	if !strings.Contains(errb.String(), "› weather") {
		t.Errorf("stderr lacks the tool line:\n%s", errb.String())
	}
}
