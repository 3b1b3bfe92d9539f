package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/mcp"
	"github.com/deerflow/deerflow/mcp/oauth"
	"github.com/deerflow/deerflow/preflight"
)

// check is `deerflow check` on cfg (already validated): what serve and
// chat would start, built by the same constructors, then every error and
// warning. It returns the exit code.
func check(ctx context.Context, cfg *config.Config, used string, stdout io.Writer) int {
	return preflight.Check(ctx, cfg, used, preflight.Options{
		NewSandbox: newSandbox,
		WebTools:   newWebTools,
		MCP:        mcpInventory,
		Uploads:    printUploads,
		Agents:     printAgents,
	}, stdout)
}

// mcpInventory connects to each MCP server once, in a sandbox in dir, and
// lists its tools.
func mcpInventory(ctx context.Context, cfg *config.Config, dir string) []mcp.ServerTools {
	sb, err := newSandbox(cfg, dir)
	if err != nil {
		return nil
	}
	m := newMCP(&config.Config{MCP: cfg.MCP, DataDir: dir}, sb, oauth.ForCheck(cfg), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return m.Inventory(ctx)
}

// printWarnings writes cfg's warnings, for a check that stopped at its
// errors.
func printWarnings(w io.Writer, cfg *config.Config) {
	var warns []string
	for _, e := range cfg.Warnings() {
		warns = append(warns, e.Error())
	}
	preflight.PrintWarnings(w, warns)
}
