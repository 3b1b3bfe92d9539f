package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/store"
)

// LoginOptions configures Login.
type LoginOptions struct {
	Server config.MCPServer
	Store  *store.Store // where the tokens go
	// Handoff, used when Store is nil, is the file the running service
	// takes the login from (HandoffPath).
	Handoff string
	Key     []byte // seals them; nil: $DEERFLOW_SECRET_KEY
	// HTTPClient makes the discovery, registration and token requests;
	// nil: a client with a 30s timeout.
	HTTPClient *http.Client
	Out        io.Writer // the link, and what happens; nil: discarded
	// In is read for a pasted redirect address (or the bare code), for
	// when the browser cannot reach the callback listener; nil: only the
	// listener.
	In io.Reader
	// Browse, when set, is given the authorization link as well (to open
	// a browser; tests act as one).
	Browse func(ctx context.Context, link string)
}

// Login runs the OAuth 2.1 authorization code flow with PKCE for one
// remote server: it asks the server, which answers 401 with where its
// authorization server is; registers deerflow there unless a client_id
// is configured; shows the link for the operator; takes the code from
// the browser's redirect (or a paste); exchanges it and stores the
// tokens sealed.
func Login(ctx context.Context, o LoginOptions) error {
	s := o.Server
	if o.Store == nil && o.Handoff == "" {
		return errors.New("oauth: nowhere to keep the login")
	}
	if s.Transport() == config.MCPStdio {
		return fmt.Errorf("MCP server %s runs over stdio: there is nothing to log in to", s.Name)
	}
	key := o.Key
	if key == nil {
		var err error
		if key, err = KeyFromEnv(); err != nil {
			return err
		}
	}
	v, err := newVault(o.Store, key)
	if err != nil {
		return err
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	cb, err := listenCallback(s.OAuth.RedirectURL)
	if err != nil {
		return err
	}
	defer cb.close()
	l := &login{o: o, cb: cb}
	h, err := auth.NewAuthorizationCodeHandler(l.handlerConfig())
	if err != nil {
		return fmt.Errorf("MCP server %s: %w", s.Name, err)
	}
	req, resp, err := probe(ctx, o.HTTPClient, s)
	if err != nil {
		return err
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return fmt.Errorf("logging in to MCP server %s: %w", s.Name, err)
	}
	if l.rec == nil {
		return fmt.Errorf("logging in to MCP server %s: no token was issued", s.Name)
	}
	l.rec.URL = s.URL
	return keep(v, o, l.rec)
}

// keep stores the login: in the database, or handed over to the running
// service.
func keep(v *vault, o LoginOptions, r *Record) error {
	name := o.Server.Name
	if o.Store == nil {
		if err := v.writeHandoff(o.Handoff, name, r); err != nil {
			return fmt.Errorf("handing the login of MCP server %s over: %w", name, err)
		}
		fmt.Fprintf(o.Out, "Logged in to MCP server %s; deerflow serve takes the tokens (encrypted) on its next attempt to connect, within a minute.\n", name)
		return nil
	}
	if err := v.save(name, r); err != nil {
		return fmt.Errorf("storing the login of MCP server %s: %w", name, err)
	}
	fmt.Fprintf(o.Out, "Logged in to MCP server %s; the tokens are stored (encrypted) in the database.\n", name)
	return nil
}

// login is one run of Login.
type login struct {
	o   LoginOptions
	cb  *callback
	rec *Record // what the exchange gave
}

func (l *login) handlerConfig() *auth.AuthorizationCodeHandlerConfig {
	oc := l.o.Server.OAuth
	hc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              l.cb.redirect,
		AuthorizationCodeFetcher: l.fetch,
		RequestRefreshToken:      true,
		Client:                   l.o.HTTPClient,
		NewTokenSource:           l.keep,
	}
	if len(oc.Scopes) > 0 {
		hc.ScopeFilter = func([]string) []string { return oc.Scopes }
	}
	if oc.ClientID != "" {
		hc.PreregisteredClient = &oauthex.ClientCredentials{ClientID: oc.ClientID}
		if oc.ClientSecret != "" {
			hc.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: oc.ClientSecret}
		}
		return hc
	}
	hc.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
		ClientName:              "deerflow",
		RedirectURIs:            []string{l.cb.redirect},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: "none", // a public client: PKCE protects the code
	}}
	return hc
}

// keep records the client and the token of the exchange (the SDK's
// NewTokenSource hook); the token is used as is, not refreshed, here.
func (l *login) keep(_ context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
	r := &Record{ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthStyle: int(c.Endpoint.AuthStyle),
		TokenURL: c.Endpoint.TokenURL, Scopes: c.Scopes, Obtained: time.Now()}
	r.setToken(t)
	l.rec = r
	return oauth2.StaticTokenSource(t), nil
}

// fetch shows the operator the link and waits for the code.
func (l *login) fetch(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	name := l.o.Server.Name
	fmt.Fprintf(l.o.Out, "Open this link in a browser and log in to MCP server %s:\n\n  %s\n\n", name, a.URL)
	if l.cb.results != nil {
		fmt.Fprintf(l.o.Out, "Waiting for the browser to come back to %s", l.cb.redirect)
		if l.o.In != nil {
			fmt.Fprint(l.o.Out, ", or paste the address it was sent to here")
		}
		fmt.Fprintln(l.o.Out, "...")
	} else {
		fmt.Fprintln(l.o.Out, "Then paste here the address the browser was sent to (it starts with "+l.cb.redirect+"):")
	}
	pasted := make(chan pasteResult, 1)
	if l.o.In != nil {
		go readPaste(l.o.In, a.URL, pasted)
	}
	if l.o.Browse != nil {
		go l.o.Browse(ctx, a.URL)
	}
	select {
	case r := <-l.cb.results:
		return r.res, r.err
	case r := <-pasted:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// probe asks the server without a token: it should answer 401 (or 403)
// with a WWW-Authenticate header saying where to log in.
func probe(ctx context.Context, hc *http.Client, s config.MCPServer) (*http.Request, *http.Response, error) {
	method, body := http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deerflow","version":"1"}}}`
	if s.Transport() == config.MCPSSE {
		method, body = http.MethodGet, ""
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL, rd)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP server %s: %w", s.Name, err)
	}
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Del("Authorization")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP server %s could not be reached: %w", s.Name, err)
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		resp.Body.Close()
		return nil, nil, fmt.Errorf("MCP server %s did not ask for a login (it answered %s)", s.Name, resp.Status)
	}
	return req, resp, nil
}

var errNoCode = errors.New("no authorization code in what was pasted")
