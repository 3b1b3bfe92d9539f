package guard

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/llm"
)

// The file tools ReadFirst knows.
const (
	toolRead    = "read_file"
	toolWrite   = "write_file"
	toolReplace = "str_replace"
)

// seen is what one run has seen of its files: the sum of each file as it
// was when the run last read or wrote it, and a lock per file that keeps
// a check and the write it allows together.
type seen struct {
	mu    sync.Mutex
	sums  map[string][32]byte
	locks map[string]*sync.Mutex
}

// ReadFirst refuses write_file and str_replace on a file that exists, has
// content and has changed since the run last read or wrote it (or that
// the run has not read at all): the model would be overwriting what it
// has not seen. The refusal says what the file holds now (size, lines,
// its start) and asks the model to read it first. Creating a file, or
// writing an empty one, is always allowed. Any read_file of the file
// counts, a range too; the run's own writes count as seen. When the file
// cannot be looked at, the call goes ahead: the tool reports the problem.
func ReadFirst(look func(ctx context.Context, path string) (File, error)) agent.Middleware {
	return agent.Middleware{
		Name: "read_before_write",
		WrapTool: func(ctx context.Context, rs *agent.RunScope, call llm.ToolCall, next agent.ToolNext) agent.ToolResult {
			if call.Name != toolRead && call.Name != toolWrite && call.Name != toolReplace {
				return next(ctx, call)
			}
			p := argsOf(call.Arguments).Path
			if p == "" {
				return next(ctx, call)
			}
			f, err := look(ctx, p)
			if err != nil {
				return next(ctx, call)
			}
			s := agent.RunValue(rs, "guard.read_first", func() *seen {
				return &seen{sums: map[string][32]byte{}, locks: map[string]*sync.Mutex{}}
			})
			defer s.lock(f.Path)()
			if call.Name == toolRead {
				// f was taken before the read: if the file changes in
				// between, the run is asked to read it again, never the
				// other way round.
				res := next(ctx, call)
				if res.Err == nil && !res.IsError && f.Exists {
					s.mark(f)
				}
				return res
			}
			return s.write(ctx, look, p, call, next)
		},
	}
}

// write runs a write call of path if the run has seen the file as it is,
// and then remembers the file as written.
func (s *seen) write(ctx context.Context, look func(context.Context, string) (File, error), path string, call llm.ToolCall, next agent.ToolNext) agent.ToolResult {
	f, err := look(ctx, path) // again, under the lock
	if err != nil {
		return next(ctx, call)
	}
	if f.Exists && f.Size > 0 {
		if sum, ok := s.sum(f.Path); !ok || sum != f.Sum {
			return agent.ToolResult{IsError: true, Content: refusal(call.Name, f, ok)}
		}
	}
	res := next(ctx, call)
	if res.Err == nil && !res.IsError {
		if after, err := look(ctx, path); err == nil && after.Exists {
			s.mark(after)
		}
	}
	return res
}

// lock locks path for the run and returns its unlock.
func (s *seen) lock(path string) func() {
	s.mu.Lock()
	l := s.locks[path]
	if l == nil {
		l = new(sync.Mutex)
		s.locks[path] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (s *seen) mark(f File) {
	s.mu.Lock()
	s.sums[f.Path] = f.Sum
	s.mu.Unlock()
}

func (s *seen) sum(path string) ([32]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum, ok := s.sums[path]
	return sum, ok
}

// refusal tells the model why tool did not run on f and what to do.
func refusal(tool string, f File, known bool) string {
	why := "you have not read it in this run"
	if known {
		why = "it has changed since you last read or wrote it"
	}
	return fmt.Sprintf("Error: %s was not run: %s already exists (%d bytes, %d lines) and %s, so the change could overwrite content you have not seen. Read it first with read_file (for an append, its last lines are enough), then call %s again. It now begins:\n%s",
		tool, f.Path, f.Size, f.Lines, why, tool, fence(f.Head))
}

// fence puts file text between backtick fences longer than any run of
// backticks in it, so it cannot close them.
func fence(s string) string {
	n, run := 3, 0
	for _, r := range s {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}
