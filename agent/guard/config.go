package guard

import (
	"context"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/sandbox"
)

// FromConfig is base (an agent chain) with the tool guards of cfg: the
// output budget, the breaker and read-before-write over sb's files (see
// guard.Wrap for their order). The lead and the subagents both use it.
func FromConfig(base []agent.Middleware, cfg *config.Config, sb *sandbox.Manager) []agent.Middleware {
	windows := make(map[string]int, len(cfg.Models))
	for _, m := range cfg.Models {
		windows[m.Name] = m.ContextWindow
	}
	return Wrap(base, Options{
		Share:        cfg.Agent.ToolOutputShare,
		Window:       func(model string) int { return windows[model] },
		FailureLimit: cfg.Agent.ToolFailureLimit,
		Files: func(ctx context.Context, path string) (File, error) {
			s, err := sb.Peek(ctx, path)
			return File{Path: s.Path, Exists: s.Exists, Size: s.Size, Lines: s.Lines, Sum: s.Sum, Head: s.Head}, err
		},
	})
}
