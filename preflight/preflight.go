// Package preflight is `deerflow check`: what serve and chat would start
// with a configuration, and every error and warning about it, in one pass.
// It builds nothing of its own: cmd/deerflow passes in its constructors
// (Options), so what check shows is what serve builds. It changes nothing
// on disk and never prints a secret.
//
// It imports config and the packages whose state it describes (sandbox,
// tools, skills, subagents, scheduler, agents, mcp); nothing imports it
// but cmd/deerflow.
package preflight

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/deerflow/deerflow/agents"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/redact"
	"github.com/deerflow/deerflow/mcp"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/tools"
)

// Options are the constructors of cmd/deerflow that check runs; a nil one
// skips its part.
type Options struct {
	// NewSandbox builds cfg's sandbox with its threads under dir, a
	// scratch directory removed afterwards.
	NewSandbox func(cfg *config.Config, dir string) (*sandbox.Manager, error)
	// WebTools builds the web tools cfg switches on.
	WebTools func(cfg *config.Config) ([]tools.Tool, error)
	// MCP connects once to each of cfg's MCP servers, with its files
	// under dir, and lists their tools.
	MCP func(ctx context.Context, cfg *config.Config, dir string) []mcp.ServerTools
	// Uploads and Agents print their parts of the report (tab-separated
	// lines).
	Uploads, Agents func(w io.Writer, cfg *config.Config)
}

// report collects what check found besides the table: errors (exit 1)
// and warnings (printed apart; exit 0 when there are only those).
type report struct {
	w     *tabwriter.Writer
	errs  []string
	warns []string
}

// Check prints what serve and chat would start with cfg (already
// validated; used is the file it came from, "" for none), then every
// error and warning, and returns the exit code: 1 when there is an
// error, 0 otherwise.
func Check(ctx context.Context, cfg *config.Config, used string, o Options, stdout io.Writer) int {
	r := &report{w: tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)}
	for _, e := range cfg.Warnings() {
		r.warns = append(r.warns, e.Error())
	}
	printConfig(r.w, cfg, used, o)
	// The sandbox is built in a scratch directory: check changes nothing.
	scratch, err := os.MkdirTemp("", "deerflow-check")
	if err != nil {
		r.errs = append(r.errs, "check: "+err.Error())
	} else {
		defer os.RemoveAll(scratch)
		r.sandboxAndTools(cfg, scratch, o)
		r.mcp(ctx, cfg, scratch, o)
	}
	r.w.Flush()
	return r.finish(stdout)
}

// sandboxAndTools prints the sandbox, the tools, skills and agents, and
// checks the agents against them.
func (r *report) sandboxAndTools(cfg *config.Config, scratch string, o Options) {
	if o.NewSandbox == nil {
		return
	}
	sb, err := o.NewSandbox(cfg, scratch)
	if err != nil {
		r.errs = append(r.errs, "sandbox: "+err.Error())
		return
	}
	printSandbox(r.w, sb)
	toolNames, skillNames := printTools(r.w, cfg, sb, o)
	for _, p := range agents.Check(cfg, toolNames, skillNames) {
		r.errs = append(r.errs, "agents: "+p)
	}
	if o.Agents != nil {
		o.Agents(r.w, cfg)
	}
}

// mcp lists each MCP server's tools; one that cannot be reached is a
// warning: serve starts without it and keeps trying.
func (r *report) mcp(ctx context.Context, cfg *config.Config, scratch string, o Options) {
	if len(cfg.MCP.Servers) == 0 || o.MCP == nil {
		return
	}
	for _, st := range o.MCP(ctx, cfg, scratch) {
		if st.Err != nil {
			msg := fmt.Sprintf("%s%s: unavailable: %s", st.Server, where(cfg, st.Server), redact.URLs(st.Err.Error()))
			fmt.Fprintf(r.w, "mcp\t%s\n", msg)
			r.warns = append(r.warns, "mcp server "+msg+" (serve starts without it and keeps trying)")
			continue
		}
		fmt.Fprintf(r.w, "mcp\t%s%s: %s\n", st.Server, where(cfg, st.Server), strings.Join(st.Tools, ", "))
	}
}

// finish prints the errors, then the warnings, each on a line of its
// own, and returns the exit code.
func (r *report) finish(w io.Writer) int {
	if len(r.errs)+len(r.warns) > 0 {
		fmt.Fprintln(w)
	}
	for _, e := range r.errs {
		fmt.Fprintf(w, "error: %s\n", e)
	}
	PrintWarnings(w, r.warns)
	if len(r.errs) > 0 {
		fmt.Fprintf(w, "%d error(s), %d warning(s)\n", len(r.errs), len(r.warns))
		return 1
	}
	if len(r.warns) > 0 {
		fmt.Fprintf(w, "no errors, %d warning(s)\n", len(r.warns))
	}
	return 0
}

// PrintWarnings writes each warning on a line of its own.
func PrintWarnings(w io.Writer, warns []string) {
	for _, x := range warns {
		fmt.Fprintf(w, "warning: %s\n", x)
	}
}
