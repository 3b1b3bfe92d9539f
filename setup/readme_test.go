package setup

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// terminal hands out one line of input per Read and echoes it to out, as
// a terminal shows what is typed where it is typed.
type terminal struct {
	lines []string
	out   *bytes.Buffer
}

func (t *terminal) Read(p []byte) (int, error) {
	if len(t.lines) == 0 {
		return 0, io.EOF
	}
	line := t.lines[0] + "\n"
	t.lines = t.lines[1:]
	t.out.WriteString(line)
	return copy(p, line), nil
}

// The README's first screen shows a `deerflow init` session: it must be
// what init prints.
func TestREADMEInitTranscript(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "$ deerflow init\n")
	block, _, ok2 := strings.Cut(block, "\n$ deerflow chat\n")
	if !ok || !ok2 {
		t.Fatal("README has no `$ deerflow init` … `$ deerflow chat` transcript")
	}
	w := newWorld(t)
	w.tg.Bot.Username = "my_deerflow_bot"
	w.model.Models = []string{"gpt-4o-mini"}
	w.env = map[string]string{"OPENAI_API_KEY": "sk-good", "OPENAI_BASE_URL": w.model.URL, "TELEGRAM_BOT_TOKEN": tgToken}
	t.Chdir(w.dir)
	var out, errb bytes.Buffer
	in := &terminal{lines: []string{"telegram", "", "@ann", "", "", ""}, out: &out}
	lookup := func(k string) (string, bool) { v, ok := w.env[k]; return v, ok }
	if code := run(t.Context(), []string{"--telegram-api-url", w.tg.URL}, lookup, in, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := strings.ReplaceAll(out.String(), w.model.URL, defaultBaseURL)
	if d := cmp.Diff(trimLines(block), trimLines(got)); d != "" {
		t.Errorf("README transcript (-README +init):\n%s", d)
	}
}

func trimLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
