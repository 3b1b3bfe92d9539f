package oauth

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/mcp"
	"github.com/deerflow/deerflow/store"
)

// TestLoginWhileServing: `deerflow mcp login` while serve holds the
// database hands the login over through a sealed file, which the running
// service's Tokens takes into the database on its next attempt.
func TestLoginWhileServing(t *testing.T) {
	f := newFixture(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.MCP.Servers = []config.MCPServer{f.srv}
	serving, err := store.Open(cfg.DBPath(), store.Options{}) // deerflow serve holds it
	if err != nil {
		t.Fatal(err)
	}
	defer serving.Close()
	tokens := NewTokens(TokensOptions{Store: serving, Key: testKey, DataDir: cfg.DataDir})
	if _, err := tokens.Token(context.Background(), "docs"); !errors.Is(err, mcp.ErrNeedsLogin) {
		t.Fatalf("before the login: %v", err)
	}

	t.Setenv(KeyEnv, strings.Repeat("07", 32)) // testKey, as the operator exports it
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if link, ok := strings.CutPrefix(sc.Text(), "  "); ok && strings.HasPrefix(link, "http") {
				browser(context.Background(), link)
			}
		}
	}()
	var errs bytes.Buffer
	code := CLI(context.Background(), cfg, []string{"login", "docs"}, nil, pw, &errs)
	pw.Close()
	if code != 0 {
		t.Fatalf("login while serving: %d %q", code, errs.String())
	}
	path := HandoffPath(cfg.DataDir, "docs")
	sealed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("nothing handed over: %v", err)
	}
	for _, tok := range append(f.as.issued, "access_token", "refresh_token") {
		if bytes.Contains(sealed, []byte(tok)) {
			t.Errorf("the handed-over file shows %q", tok)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("the handed-over file is %v", st.Mode())
	}

	tok, err := tokens.Token(context.Background(), "docs")
	if err != nil || tok == "" {
		t.Fatalf("after the hand-over: %q, %v", tok, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the handed-over file is still there: %v", err)
	}
	if len(stored(t, serving, "docs")) == 0 {
		t.Error("the login was not stored in the database")
	}
	_, reg, state := run(t, f.srv, tokens)
	if state.Phase != mcp.Ready {
		t.Fatalf("the server after the hand-over: %+v", state)
	}
	if got, err := call(t, reg, "docs_echo", `{"text":"hi"}`); err != nil || got != "hi" {
		t.Errorf("echo: %q, %v", got, err)
	}
}

// TestHandoffSealedWithAnotherKey: a file the service cannot open is set
// aside (reported once) and the server still needs a login.
func TestHandoffSealedWithAnotherKey(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	other, _ := newVault(nil, bytes.Repeat([]byte{9}, 32))
	path := HandoffPath(dir, "docs")
	if err := other.writeHandoff(path, "docs", &Record{AccessToken: "x"}); err != nil {
		t.Fatal(err)
	}
	tokens := NewTokens(TokensOptions{Store: f.st, Key: testKey, DataDir: dir})
	if _, err := tokens.Token(context.Background(), "docs"); !errors.Is(err, mcp.ErrNeedsLogin) {
		t.Errorf("with a file sealed by another key: %v", err)
	}
	if _, err := os.Stat(path + ".rejected"); err != nil {
		t.Errorf("the file was not set aside: %v", err)
	}
}
