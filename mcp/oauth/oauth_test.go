package oauth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/mcp"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

var testKey = bytes.Repeat([]byte{7}, 32)

type echoIn struct {
	Text string `json:"text"`
}

func echoServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

func openStore(t *testing.T) *store.Store {
	st, err := store.Open(filepath.Join(t.TempDir(), "deerflow.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// run starts a manager for s with tokens and waits until it settles.
func run(t *testing.T, s config.MCPServer, tok mcp.Tokens) (*mcp.Manager, *tools.Registry, mcp.State) {
	t.Helper()
	m := mcp.New(mcp.Options{Servers: []mcp.Server{mcp.ServerFrom(s)}, Tokens: tok, RestartBackoff: time.Hour})
	t.Cleanup(func() { m.Close() })
	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := m.States()[0]
		if st.Phase != mcp.Connecting {
			return m, reg, st
		}
		if time.Now().After(deadline) {
			t.Fatalf("still connecting: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func call(t *testing.T, reg *tools.Registry, name, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return reg.Call(ctx, name, json.RawMessage(args))
}

func stored(t *testing.T, st *store.Store, server string) []byte {
	t.Helper()
	var b []byte
	if err := st.View(func(tx *store.Tx) (err error) { b, err = tx.State(stateKey(server)); return err }); err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is an authorization server, the MCP server it protects, and a
// store, with the server configured as "docs".
type fixture struct {
	as  *authServer
	srv config.MCPServer
	st  *store.Store
	v   *vault
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{as: newAuthServer(), st: openStore(t)}
	t.Cleanup(f.as.Close)
	rs := protected(f.as, echoServer())
	t.Cleanup(rs.Close)
	f.srv = config.MCPServer{Name: "docs", URL: rs.URL + "/mcp", Auth: "oauth"}
	f.v, _ = newVault(f.st, testKey)
	return f
}

func (f *fixture) tokens() *Tokens { return NewTokens(TokensOptions{Store: f.st, Key: testKey}) }

// login logs in with the test's HTTP client as the browser and returns
// what the operator was told.
func (f *fixture) login(t *testing.T) string {
	t.Helper()
	var out bytes.Buffer
	if err := Login(context.Background(), LoginOptions{Server: f.srv, Store: f.st, Key: testKey, Out: &out, Browse: browser}); err != nil {
		t.Fatalf("login: %v\n%s", err, out.String())
	}
	return out.String()
}

// expire makes the stored access token expired and returns the record as
// it was.
func (f *fixture) expire(t *testing.T) Record {
	t.Helper()
	rec, err := f.v.load("docs")
	if err != nil {
		t.Fatal(err)
	}
	old := *rec
	rec.Expiry = time.Now().Add(-time.Minute)
	if err := f.v.save("docs", rec); err != nil {
		t.Fatal(err)
	}
	return old
}

func TestNeedsLoginFirst(t *testing.T) {
	f := newFixture(t)
	_, reg, state := run(t, f.srv, f.tokens())
	if state.Phase != mcp.NeedsLogin || !strings.Contains(state.Err, "MCP server docs needs login: run `deerflow mcp login docs`") {
		t.Fatalf("before the login: %+v", state)
	}
	si, ok := reg.Get("docs_unavailable")
	if !ok || !strings.Contains(si.Spec().Description, "needs an operator login (`deerflow mcp login docs`)") {
		t.Fatalf("the model is offered %v", reg.Names())
	}
	if _, err := call(t, reg, "docs_unavailable", `{}`); err == nil || !strings.Contains(err.Error(), "an operator must log in") {
		t.Errorf("stand-in: %v", err)
	}
}

func TestLoginAndCall(t *testing.T) {
	f := newFixture(t)
	out := f.login(t)
	for _, want := range []string{"Open this link in a browser and log in to MCP server docs", f.as.URL + "/authorize?", "code_challenge_method=S256", "Logged in to MCP server docs"} {
		if !strings.Contains(out, want) {
			t.Errorf("the operator was told %q, want %q in it", out, want)
		}
	}
	raw := stored(t, f.st, "docs")
	for _, tok := range append(f.as.issued, "access_token", "refresh_token", "Bearer") {
		if bytes.Contains(raw, []byte(tok)) {
			t.Errorf("the stored login shows %q", tok)
		}
	}
	_, reg, state := run(t, f.srv, f.tokens())
	if state.Phase != mcp.Ready || state.Tools != 1 {
		t.Fatalf("after the login: %+v", state)
	}
	if got, err := call(t, reg, "docs_echo", `{"text":"hi"}`); err != nil || got != "hi" {
		t.Fatalf("echo: %q, %v", got, err)
	}
}

func TestRefreshBeforeExpiry(t *testing.T) {
	f := newFixture(t)
	f.login(t)
	old := f.expire(t)
	f.as.dropAccess(old.AccessToken) // only a refreshed token will do
	_, reg, state := run(t, f.srv, f.tokens())
	if state.Phase != mcp.Ready {
		t.Fatalf("with an expired access token: %+v", state)
	}
	if got, err := call(t, reg, "docs_echo", `{"text":"fresh"}`); err != nil || got != "fresh" {
		t.Fatalf("echo after the refresh: %q, %v", got, err)
	}
	if n := f.as.count("refresh_token"); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	rec, _ := f.v.load("docs")
	if rec.AccessToken == old.AccessToken || rec.RefreshToken == old.RefreshToken || time.Until(rec.Expiry) < 50*time.Minute {
		t.Errorf("the refreshed (rotated) login was not stored: %+v", rec.Expiry)
	}
}

// A server may refuse an access token before its expiry: the next
// attempt refreshes it.
func TestRefusedAccessTokenRefreshed(t *testing.T) {
	f := newFixture(t)
	f.login(t)
	tok := f.tokens()
	cur, err := tok.Token(context.Background(), "docs")
	if err != nil {
		t.Fatal(err)
	}
	f.as.dropAccess(cur)
	m := mcp.New(mcp.Options{Servers: []mcp.Server{mcp.ServerFrom(f.srv)}, Tokens: tok})
	defer m.Close()
	inv := m.Inventory(context.Background())
	if inv[0].State.Phase != mcp.Ready || f.as.count("refresh_token") != 1 {
		t.Errorf("after the refusal: %+v, %d refreshes", inv[0].State, f.as.count("refresh_token"))
	}
}

func TestRevokedRefreshNeedsLogin(t *testing.T) {
	f := newFixture(t)
	f.login(t)
	f.as.revoke()
	f.expire(t)
	_, _, state := run(t, f.srv, f.tokens())
	if state.Phase != mcp.NeedsLogin || !strings.Contains(state.Err, "refused the refresh token (invalid_grant)") {
		t.Errorf("after the revocation: %+v", state)
	}
}

func TestLoginPastedRedirect(t *testing.T) {
	as := newAuthServer()
	t.Cleanup(as.Close)
	rs := protected(as, echoServer())
	t.Cleanup(rs.Close)
	st := openStore(t)
	// A redirect this machine does not serve: the operator pastes where
	// the browser was sent.
	srv := config.MCPServer{Name: "docs", URL: rs.URL + "/mcp", OAuth: config.MCPOAuth{RedirectURL: "https://deerflow.example.com/oauth/callback"}}
	pr, pw := io.Pipe()
	defer pw.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	paste := func(ctx context.Context, link string) {
		resp, err := noFollow.Get(link)
		if err != nil {
			return
		}
		resp.Body.Close()
		io.WriteString(pw, "\n"+resp.Header.Get("Location")+"\n")
	}
	var out bytes.Buffer
	if err := Login(context.Background(), LoginOptions{Server: srv, Store: st, Key: testKey, Out: &out, In: pr, Browse: paste}); err != nil {
		t.Fatalf("login: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "paste here the address") {
		t.Errorf("told %q", out.String())
	}
	if _, reg, state := run(t, srv, NewTokens(TokensOptions{Store: st, Key: testKey})); state.Phase != mcp.Ready {
		t.Errorf("after the login: %+v (%v)", state, reg.Names())
	}
}

func TestLoginPreregisteredClient(t *testing.T) {
	as := newAuthServer()
	t.Cleanup(as.Close)
	rs := protected(as, echoServer())
	t.Cleanup(rs.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/cb"
	ln.Close()
	as.preregister("deerflow", "s3cret", redirect)
	st := openStore(t)
	srv := config.MCPServer{Name: "docs", URL: rs.URL + "/mcp", OAuth: config.MCPOAuth{ClientID: "deerflow", ClientSecret: "s3cret", RedirectURL: redirect, Scopes: []string{"tools"}}}
	if err := Login(context.Background(), LoginOptions{Server: srv, Store: st, Key: testKey, Browse: browser}); err != nil {
		t.Fatalf("login: %v", err)
	}
	v, _ := newVault(st, testKey)
	rec, err := v.load("docs")
	if err != nil || rec.ClientID != "deerflow" || rec.RefreshToken == "" {
		t.Fatalf("stored %+v, %v", rec, err)
	}
	// A wrong secret is refused at the token endpoint.
	srv.OAuth.ClientSecret = "wrong"
	if err := Login(context.Background(), LoginOptions{Server: srv, Store: st, Key: testKey, Browse: browser}); err == nil {
		t.Error("a login with a wrong client secret succeeded")
	}
}

func TestUnauthorizedWithoutOAuthConfig(t *testing.T) {
	as := newAuthServer()
	t.Cleanup(as.Close)
	rs := protected(as, echoServer())
	t.Cleanup(rs.Close)
	m, _, state := run(t, config.MCPServer{Name: "docs", URL: rs.URL + "/mcp"}, nil)
	if state.Phase != mcp.NeedsLogin || !strings.Contains(state.Err, "the server answered 401 Unauthorized") {
		t.Errorf("%+v", state)
	}
	// deerflow check says the same.
	inv := m.Inventory(context.Background())
	if len(inv) != 1 || inv[0].State.Phase != mcp.NeedsLogin || inv[0].State.String() != state.Err {
		t.Errorf("inventory: %+v", inv)
	}
}

func TestNoKey(t *testing.T) {
	t.Setenv(KeyEnv, "")
	st := openStore(t)
	err := Login(context.Background(), LoginOptions{Server: config.MCPServer{Name: "x", URL: "http://127.0.0.1:1/mcp"}, Store: st})
	if !errors.Is(err, ErrNoKey) {
		t.Errorf("login without a key: %v", err)
	}
	_, err = NewTokens(TokensOptions{Store: st}).Token(context.Background(), "x")
	if !errors.Is(err, mcp.ErrNeedsLogin) || !strings.Contains(err.Error(), KeyEnv+" is not set") {
		t.Errorf("tokens without a key: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	hex64 := strings.Repeat("ab", 32)
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{hex64, true},
		{"q83vq83vq83vq83vq83vq83vq83vq83vq83vq83vq80=", true}, // base64 of 32 bytes
		{"q83vq83vq83vq83vq83vq83vq83vq83vq83vq83vq80", true},
		{strings.Repeat("ab", 16), false},
		{"not a key", false},
	} {
		if _, err := ParseKey(tt.in); (err == nil) != tt.ok {
			t.Errorf("ParseKey(%q): %v", tt.in, err)
		}
	}
	if _, err := ParseKey(""); !errors.Is(err, ErrNoKey) {
		t.Errorf("empty: %v", err)
	}
}

func TestSealedPerServer(t *testing.T) {
	st := openStore(t)
	v, _ := newVault(st, testKey)
	if err := v.save("a", &Record{AccessToken: "secret-token"}); err != nil {
		t.Fatal(err)
	}
	// Moved to another server's key, it does not open.
	raw := stored(t, st, "a")
	if err := st.Update(func(tx *store.Tx) error { return tx.PutState(stateKey("b"), raw) }); err != nil {
		t.Fatal(err)
	}
	if _, err := v.load("b"); err == nil {
		t.Error("a record moved to another server opened")
	}
	other, _ := newVault(st, bytes.Repeat([]byte{8}, 32))
	if _, err := other.load("a"); err == nil || !strings.Contains(err.Error(), "was the key changed") {
		t.Errorf("another key: %v", err)
	}
}

func TestCLI(t *testing.T) {
	f := newFixture(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.MCP.Servers = []config.MCPServer{f.srv}
	var errs bytes.Buffer
	if code := CLI(context.Background(), cfg, []string{"login"}, nil, io.Discard, &errs); code != 2 || !strings.Contains(errs.String(), "usage: deerflow mcp") {
		t.Errorf("no name: %d %q", code, errs.String())
	}
	if code := CLI(context.Background(), cfg, []string{"login", "nope"}, nil, io.Discard, &errs); code != 1 || !strings.Contains(errs.String(), `no MCP server named "nope"`) {
		t.Errorf("unknown server: %d %q", code, errs.String())
	}
	t.Setenv(KeyEnv, "")
	if code := CLI(context.Background(), cfg, []string{"login", "docs"}, nil, io.Discard, &errs); code != 1 || !strings.Contains(errs.String(), KeyEnv+" is not set") {
		t.Errorf("no key: %d %q", code, errs.String())
	}
	t.Setenv(KeyEnv, strings.Repeat("0f", 32))

	// The operator reads the link on stdout; the test opens it.
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if link, ok := strings.CutPrefix(sc.Text(), "  "); ok && strings.HasPrefix(link, "http") {
				browser(context.Background(), link)
			}
		}
	}()
	code := CLI(context.Background(), cfg, []string{"login", "docs"}, nil, pw, &errs)
	pw.Close()
	if code != 0 {
		t.Fatalf("login: %d %q", code, errs.String())
	}
	// deerflow check reads the login from the database.
	m := mcp.New(mcp.Options{Servers: mcp.ServersFrom(cfg.MCP.Servers), Tokens: ForCheck(cfg)})
	defer m.Close()
	if inv := m.Inventory(context.Background()); inv[0].State.Phase != mcp.Ready {
		t.Errorf("check after the login: %+v", inv[0].State)
	}
}

func TestLoginSSE(t *testing.T) {
	as := newAuthServer()
	t.Cleanup(as.Close)
	srv := echoServer()
	rs := protectedHandler(as, sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(rs.Close)
	st := openStore(t)
	s := config.MCPServer{Name: "docs", Type: "sse", URL: rs.URL + "/mcp", Auth: "oauth"}
	if err := Login(context.Background(), LoginOptions{Server: s, Store: st, Key: testKey, Browse: browser}); err != nil {
		t.Fatalf("login: %v", err)
	}
	_, reg, state := run(t, s, NewTokens(TokensOptions{Store: st, Key: testKey}))
	if state.Phase != mcp.Ready || state.Transport != "sse" {
		t.Fatalf("after the login: %+v", state)
	}
	if got, err := call(t, reg, "docs_echo", `{"text":"sse"}`); err != nil || got != "sse" {
		t.Errorf("echo: %q, %v", got, err)
	}
}
