package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/mcp"
	"github.com/deerflow/deerflow/store"
)

// loginTimeout bounds how long `deerflow mcp login` waits for the
// operator.
const loginTimeout = 15 * time.Minute

// CLI runs `deerflow mcp login NAME` (args are what follows "mcp") and
// returns the exit code. While deerflow serve holds the database, the
// login is handed over to it through a sealed file (HandoffPath).
func CLI(ctx context.Context, cfg *config.Config, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "login" {
		fmt.Fprintln(stderr, "usage: deerflow mcp [--config FILE] login NAME")
		return 2
	}
	name := args[1]
	var srv *config.MCPServer
	for i := range cfg.MCP.Servers {
		if cfg.MCP.Servers[i].Name == name {
			srv = &cfg.MCP.Servers[i]
		}
	}
	if srv == nil {
		fmt.Fprintf(stderr, "deerflow mcp login: no MCP server named %q in mcp.servers\n", name)
		return 1
	}
	key, err := KeyFromEnv()
	if err != nil {
		fmt.Fprintf(stderr, "deerflow mcp login: %v\n", err)
		return 1
	}
	o := LoginOptions{Server: *srv, Key: key, Out: stdout, In: stdin}
	st, err := store.Open(cfg.DBPath(), store.Options{Timeout: time.Second})
	switch {
	case errors.Is(err, store.ErrLocked):
		o.Handoff = HandoffPath(cfg.DataDir, name) // deerflow serve runs: it takes the login
	case err != nil:
		fmt.Fprintf(stderr, "deerflow mcp login: opening %s: %v\n", cfg.DBPath(), err)
		return 1
	default:
		defer st.Close()
		o.Store = st
	}
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	if err := Login(ctx, o); err != nil {
		fmt.Fprintf(stderr, "deerflow mcp login: %v\n", err)
		return 1
	}
	return 0
}

// ForCheck is the logins of cfg's OAuth servers for deerflow check, read
// from the database for each request (and refreshed there when due); nil
// when no server uses OAuth.
func ForCheck(cfg *config.Config) mcp.Tokens {
	for _, s := range cfg.MCP.Servers {
		if s.UsesOAuth() {
			return &checkTokens{path: cfg.DBPath()}
		}
	}
	return nil
}

type checkTokens struct {
	path string
	mu   sync.Mutex // one open at a time: the file is locked
}

func (c *checkTokens) Token(ctx context.Context, server string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := os.Stat(c.path); err != nil {
		return "", fmt.Errorf("%w: no database at %s yet", mcp.ErrNeedsLogin, c.path)
	}
	st, err := store.Open(c.path, store.Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		return "", fmt.Errorf("reading the logins: %w (the database is in use while deerflow serve runs)", err)
	}
	defer st.Close()
	return NewTokens(TokensOptions{Store: st}).Token(ctx, server)
}
