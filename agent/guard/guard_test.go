package guard

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/agent/loopdetect"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
)

// fakeFS is a tool chain's end over files in memory: read_file,
// write_file and str_replace, and what the guards look at.
type fakeFS struct {
	mu    sync.Mutex
	files map[string]string
	calls []string // tools that actually ran
}

func newFS(files map[string]string) *fakeFS { return &fakeFS{files: files} }

func (f *fakeFS) look(_ context.Context, path string) (File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Contains(path, "bad") {
		return File{}, errors.New("outside the sandbox")
	}
	c, ok := f.files[path]
	return File{Path: path, Exists: ok, Size: int64(len(c)), Lines: lines(c), Sum: sha256.Sum256([]byte(c)), Head: c}, nil
}

func (f *fakeFS) tool(_ context.Context, call llm.ToolCall) agent.ToolResult {
	var a struct{ Path, Content, Old_str, New_str string }
	json.Unmarshal([]byte(call.Arguments), &a)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call.Name)
	switch call.Name {
	case "read_file":
		c, ok := f.files[a.Path]
		if !ok {
			return agent.ToolResult{Err: errors.New(a.Path + " does not exist")}
		}
		return agent.ToolResult{Content: c}
	case "write_file":
		f.files[a.Path] = a.Content
	case "str_replace":
		f.files[a.Path] = strings.Replace(f.files[a.Path], a.Old_str, a.New_str, 1)
	}
	return agent.ToolResult{Content: "ok"}
}

// call runs one tool call through mw, ending at end.
func call(rs *agent.RunScope, mw agent.Middleware, end agent.ToolNext, name, args string) agent.ToolResult {
	return mw.WrapTool(context.Background(), rs, llm.ToolCall{ID: "c", Name: name, Arguments: args}, end)
}

func TestReadFirst(t *testing.T) {
	const p = "/mnt/user-data/workspace/a.md"
	write := `{"path":"` + p + `","content":"new"}`
	read := `{"path":"` + p + `"}`
	type step struct {
		tool, args string
		refused    string // part of the refusal; "" means the call runs
		outside    func(*fakeFS)
	}
	cases := []struct {
		name  string
		files map[string]string
		steps []step
	}{
		{"a new file is always allowed", map[string]string{}, []step{{tool: "write_file", args: write}, {tool: "write_file", args: write}}},
		{"an empty file is allowed", map[string]string{p: ""}, []step{{tool: "write_file", args: write}}},
		{"unread existing file is refused, then allowed after read", map[string]string{p: "old\ncontent\n"}, []step{
			{tool: "write_file", args: write, refused: "you have not read it in this run"},
			{tool: "str_replace", args: `{"path":"` + p + `","old_str":"old","new_str":"x"}`, refused: "2 lines"},
			{tool: "read_file", args: read},
			{tool: "write_file", args: write},
			{tool: "str_replace", args: `{"path":"` + p + `","old_str":"new","new_str":"newer"}`}, // own write counts as seen
		}},
		{"a change from outside is refused until read again", map[string]string{p: "v1\n"}, []step{
			{tool: "read_file", args: `{"path":"` + p + `","start_line":1}`},
			{tool: "write_file", args: `{"path":"` + p + `","content":"v2\n","append":true}`, outside: func(f *fakeFS) { f.files[p] = "v1 changed by bash\n" }, refused: "changed since you last read or wrote it"},
			{tool: "read_file", args: read},
			{tool: "write_file", args: write},
		}},
		{"other tools and unknown paths pass", map[string]string{p: "x"}, []step{
			{tool: "bash", args: `{"command":"ls"}`},
			{tool: "write_file", args: `{"path":"bad/../x","content":"y"}`},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := newFS(c.files)
			mw, rs := ReadFirst(fs.look), &agent.RunScope{}
			for i, s := range c.steps {
				if s.outside != nil {
					s.outside(fs)
				}
				n := len(fs.calls)
				res := call(rs, mw, fs.tool, s.tool, s.args)
				ran := len(fs.calls) > n
				switch {
				case s.refused == "" && (!ran || res.IsError):
					t.Fatalf("step %d (%s): refused: %+v", i, s.tool, res)
				case s.refused != "" && (ran || !res.IsError || res.Err != nil || !strings.Contains(res.Content, s.refused)):
					t.Fatalf("step %d (%s): want a refusal with %q, ran=%v: %+v", i, s.tool, s.refused, ran, res)
				}
			}
		})
	}
}

func TestReadFirstRefusalShowsTheFile(t *testing.T) {
	fs := newFS(map[string]string{"/w/a.md": "# Title\n```go\ncode\n```\n"})
	res := call(&agent.RunScope{}, ReadFirst(fs.look), fs.tool, "write_file", `{"path":"/w/a.md","content":"x"}`)
	for _, want := range []string{"/w/a.md already exists (23 bytes, 4 lines)", "````\n# Title\n```go", "read_file"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("refusal lacks %q:\n%s", want, res.Content)
		}
	}
}

func TestReadFirstIsPerRun(t *testing.T) {
	fs := newFS(map[string]string{"/w/a": "x"})
	mw := ReadFirst(fs.look)
	if res := call(&agent.RunScope{}, mw, fs.tool, "read_file", `{"path":"/w/a"}`); res.IsError {
		t.Fatal(res)
	}
	if res := call(&agent.RunScope{}, mw, fs.tool, "write_file", `{"path":"/w/a","content":"y"}`); !res.IsError {
		t.Fatal("a read of another run counted")
	}
}

func TestBreaker(t *testing.T) {
	fails := func(msg string) agent.ToolNext {
		return func(context.Context, llm.ToolCall) agent.ToolResult {
			return agent.ToolResult{Err: errors.New(msg), IsError: true, Content: "Error: " + msg}
		}
	}
	ok := func(context.Context, llm.ToolCall) agent.ToolResult { return agent.ToolResult{Content: "fine"} }
	type step struct {
		tool string
		next agent.ToolNext
		want string // part of the result
	}
	cases := []struct {
		name  string
		limit int
		steps []step
	}{
		{"same failure three times switches off", 0, []step{
			{"web_fetch", fails("fetch https://x: timeout after 10s"), "Error: fetch"},
			{"web_fetch", fails("fetch https://x: timeout after 12s"), "Error: fetch"},
			{"web_fetch", fails("fetch https://x: TIMEOUT after 3s"), "is switched off for the rest of this run"},
			{"web_fetch", ok, "Error: web_fetch is switched off"},
			{"bash", ok, "fine"}, // other tools go on
		}},
		{"a success resets the count", 0, []step{
			{"t", fails("boom"), "boom"}, {"t", fails("boom"), "boom"}, {"t", ok, "fine"},
			{"t", fails("boom"), "boom"}, {"t", fails("boom"), "boom"}, {"t", ok, "fine"},
		}},
		{"a different failure resets the count", 0, []step{
			{"t", fails("boom"), "boom"}, {"t", fails("boom"), "boom"}, {"t", fails("bang"), "bang"},
			{"t", fails("boom"), "boom"}, {"t", fails("boom"), "boom"}, {"t", ok, "fine"},
		}},
		{"a limit of 2", 2, []step{{"t", fails("boom"), "boom"}, {"t", fails("boom"), "switched off"}, {"t", ok, "switched off"}}},
		{"negative: never", -1, []step{{"t", fails("boom"), "boom"}, {"t", fails("boom"), "boom"}, {"t", fails("boom"), "boom"}, {"t", ok, "fine"}}},
		{"a guard's refusal is not a failure", 0, []step{
			{"t", fails("boom"), "boom"}, {"t", fails("boom"), "boom"},
			{"t", func(context.Context, llm.ToolCall) agent.ToolResult {
				return agent.ToolResult{IsError: true, Content: "Error: read it first"}
			}, "read it first"},
			{"t", ok, "fine"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mw, rs := Breaker(c.limit), &agent.RunScope{}
			for i, s := range c.steps {
				if res := call(rs, mw, s.next, s.tool, `{}`); !strings.Contains(res.Content, s.want) {
					t.Fatalf("step %d: want %q in %q", i, s.want, res.Content)
				}
			}
		})
	}
}

func TestBreakerIgnoresCancelledCalls(t *testing.T) {
	mw, rs := Breaker(2), &agent.RunScope{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fail := func(context.Context, llm.ToolCall) agent.ToolResult { return agent.ToolResult{Err: context.Canceled} }
	for range 3 {
		mw.WrapTool(ctx, rs, llm.ToolCall{Name: "t"}, fail)
	}
	if res := call(rs, mw, func(context.Context, llm.ToolCall) agent.ToolResult { return agent.ToolResult{Content: "fine"} }, "t", "{}"); res.Content != "fine" {
		t.Fatal(res)
	}
}

func TestLimit(t *testing.T) {
	cases := []struct {
		share  float64
		window int
		want   int
	}{
		{0.1, 0, DefaultChars},
		{0.1, 128_000, 51_200},
		{0, 128_000, 51_200},
		{0.1, 4_000, MinChars},
		{0.5, 1_000_000, MaxChars},
	}
	for _, c := range cases {
		if got := Limit(c.share, c.window); got != c.want {
			t.Errorf("Limit(%g, %d) = %d, want %d", c.share, c.window, got, c.want)
		}
	}
}

// numbered is n lines "line 1\n", "line 2\n", ….
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestBudget(t *testing.T) {
	big := numbered(5000) // about 44,000 characters
	window := func(m string) int { return map[string]int{"small": 25_000}[m] }
	cases := []struct {
		name, model, tool, args, out string
		want                         []string
		whole                        bool
	}{
		{name: "under the limit", tool: "web_fetch", out: "short", whole: true},
		{name: "within the note room", tool: "bash", out: strings.Repeat("x", DefaultChars+500), whole: true},
		{name: "read_file says which lines", tool: "read_file", args: `{"path":"/a","start_line":101}`, out: big,
			want: []string{"line 1\n", "line 5000", "characters were cut from the middle", "read_file start_line=1211 end_line=4100"}},
		{name: "bash says to redirect", tool: "bash", out: big, want: []string{"line 1\n", "line 5000", "redirected to a file"}},
		{name: "any other tool", tool: "mcp_docs_search", out: big, want: []string{"Ask the tool for less"}},
		{name: "the model's window sets the limit", model: "small", tool: "web_fetch", out: numbered(1500), want: []string{"(at most 10000 per tool result)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := tools.WithEnv(context.Background(), &tools.Env{Model: c.model})
			end := func(context.Context, llm.ToolCall) agent.ToolResult { return agent.ToolResult{Content: c.out} }
			res := Budget(0.1, window).WrapTool(ctx, &agent.RunScope{}, llm.ToolCall{Name: c.tool, Arguments: c.args}, end)
			if c.whole {
				if res.Content != c.out {
					t.Fatalf("cut a result within the limit")
				}
				return
			}
			limit := Limit(0.1, window(c.model))
			if n := len([]rune(res.Content)); n > limit+noteRoom {
				t.Errorf("%d characters kept, limit %d", n, limit)
			}
			for _, w := range c.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result lacks %q", w)
				}
			}
		})
	}
}

func TestCutKeepsLinesWhole(t *testing.T) {
	s := numbered(1000)
	got := Cut(s, 2000, llm.ToolCall{Name: "read_file", Arguments: `{}`})
	head, rest, _ := strings.Cut(got, "\n\n[...")
	_, tail, _ := strings.Cut(rest, "...]\n\n")
	if !strings.HasPrefix(s, head+"\n") || !strings.HasSuffix(s, tail) || !strings.HasPrefix(tail, "line ") {
		t.Fatalf("head %q… tail …%q", head[len(head)-20:], tail[:20])
	}
	first := strings.Count(head, "\n") + 2
	last := 1000 - strings.Count(tail, "\n")
	if want := fmt.Sprintf("start_line=%d end_line=%d", first, last); !strings.Contains(got, want) {
		t.Errorf("note lacks %q: %s", want, got[len(head):len(head)+300])
	}
}

func TestWrapOrder(t *testing.T) {
	var names []string
	for _, m := range Wrap(agent.Chain(loopdetect.Limits{}), Options{Files: newFS(nil).look}) {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, ","); got != "tool_breaker,tool_errors,loop_detection,model_retry,read_before_write,tool_output_budget" {
		t.Error(got)
	}
}
