package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/config"
)

// Tokens gives the OAuth access tokens of remote servers (mcp/oauth keeps
// them in the store).
type Tokens interface {
	// Token returns a current access token for the server, refreshed
	// first when it is about to expire; an error wrapping ErrNeedsLogin
	// when there is none or it can no longer be refreshed.
	Token(ctx context.Context, server string) (string, error)
}

// ErrNeedsLogin is the cause of a server's "needs login" state: it has no
// usable OAuth token, or refused the one it was sent.
var ErrNeedsLogin = errors.New("no valid OAuth login")

var errNoTransport = errors.New("has neither a command nor a URL")

// transport is how dial reaches the server: a started process (kept in
// d) or an HTTP endpoint.
func (c *conn) transport(ctx context.Context, d *dialed) (sdk.Transport, error) {
	if c.m.testTransport != nil {
		return c.m.testTransport(c.srv), nil
	}
	switch tr := c.srv.transport(); {
	case tr == config.MCPStdio && c.srv.Command != "":
		p, err := c.start(ctx)
		d.proc = p
		if err != nil {
			return nil, err
		}
		return p.transport(), nil
	case c.srv.URL == "":
	case tr == config.MCPHTTP:
		return &sdk.StreamableClientTransport{Endpoint: c.srv.URL, HTTPClient: c.httpClient(d)}, nil
	case tr == config.MCPSSE:
		return sseTransport{life: c.m.ctx, t: &sdk.SSEClientTransport{Endpoint: c.srv.URL, HTTPClient: c.httpClient(d)}}, nil
	}
	return nil, errNoTransport
}

// sseTransport keeps an SSE session's event stream, which the SDK opens
// with the context given to Connect, alive past the connection attempt:
// that context bounds only the attempt; closing the session (or the
// manager) ends the stream.
type sseTransport struct {
	life context.Context
	t    *sdk.SSEClientTransport
}

func (t sseTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	live, cancel := context.WithCancel(t.life)
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.t.Connect(live)
	if !stop() {
		err = ctx.Err() // the attempt ran out of time
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		cancel()
		return nil, err
	}
	return sseConn{conn, cancel}, nil
}

type sseConn struct {
	sdk.Connection
	cancel context.CancelFunc
}

func (c sseConn) Close() error {
	defer c.cancel()
	return c.Connection.Close()
}

// httpClient is the manager's client sending the server's headers and,
// for an OAuth server, its bearer token; a 401 is noted in d.
func (c *conn) httpClient(d *dialed) *http.Client {
	base := c.m.http.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	at := &authTransport{base: base, server: c.srv.Name, refused: &d.refused}
	if c.srv.OAuth {
		at.tokens = c.m.o.Tokens
		at.oauth = true
	}
	cp := *c.m.http
	cp.Transport = at
	return withHeaders(&cp, c.srv.Headers)
}

// loginErr is the error of a server that needs an OAuth login.
func (c *conn) loginErr(cause error) error {
	if !errors.Is(cause, ErrNeedsLogin) {
		cause = fmt.Errorf("%w: the server answered 401 Unauthorized", ErrNeedsLogin)
	}
	return fmt.Errorf("MCP server %s needs login: run `deerflow mcp login %s` (%w)", c.srv.Name, c.srv.Name, cause)
}

// authTransport adds an OAuth server's bearer token to each request and
// notes a 401.
type authTransport struct {
	base    http.RoundTripper
	server  string
	oauth   bool
	tokens  Tokens // nil with oauth: there is no token store
	refused *atomic.Bool
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var tok string
	if t.oauth {
		var err error
		if tok, err = t.token(req.Context()); err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized &&
		strings.Contains(strings.ToLower(resp.Header.Get("WWW-Authenticate")), "bearer") {
		t.refused.Store(true)
		if r, ok := t.tokens.(refusedTokens); ok && tok != "" {
			r.Refused(t.server, tok) // refreshed before the next attempt
		}
	}
	return resp, err
}

// refusedTokens is Tokens told that the server refused a token.
type refusedTokens interface {
	Refused(server, token string)
}

func (t *authTransport) token(ctx context.Context) (string, error) {
	if t.tokens == nil {
		return "", fmt.Errorf("%w: no token store (is DEERFLOW_SECRET_KEY set?)", ErrNeedsLogin)
	}
	return t.tokens.Token(ctx, t.server)
}

// defaultHTTPClient has connect timeouts but no overall one: a streamable
// HTTP session keeps a long-lived event stream open, and calls are bounded
// by their context.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: t}
}

// withHeaders returns c sending h with every request.
func withHeaders(c *http.Client, h map[string]string) *http.Client {
	if len(h) == 0 {
		return c
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp := *c
	cp.Transport = headerTransport{base: base, headers: h}
	return &cp
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v) // an OAuth token, set below, still wins
	}
	return t.base.RoundTrip(r)
}
