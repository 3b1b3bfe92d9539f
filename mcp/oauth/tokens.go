package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/deerflow/deerflow/mcp"
	"github.com/deerflow/deerflow/store"
)

// TokensOptions configures Tokens.
type TokensOptions struct {
	Store *store.Store // where logins are kept; nil: every server needs a login
	// DataDir is where logins made while the service runs are handed
	// over (HandoffPath); "": none are.
	DataDir string
	// Key seals the tokens; nil: $DEERFLOW_SECRET_KEY (without it every
	// OAuth server needs a login, and says why).
	Key        []byte
	HTTPClient *http.Client // for refreshing; nil: a client with a 30s timeout
	// Margin is how long before its expiry an access token is refreshed;
	// 0: a minute, or half the token's life when that is shorter.
	Margin time.Duration
	Logger *slog.Logger // nil: discarded
}

// Tokens gives the mcp package each OAuth server's access token (it
// implements mcp.Tokens), refreshed before it expires; rotated refresh
// tokens are stored at once. It is safe for concurrent use.
type Tokens struct {
	o   TokensOptions
	v   *vault
	err error // why v is nil

	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	mu      sync.Mutex // held across a refresh: one at a time per server
	rec     *Record
	stale   bool  // the server refused the access token: refresh it
	refused error // the refresh token was refused: only a new login helps
}

var _ mcp.Tokens = (*Tokens)(nil)

// NewTokens returns the tokens kept in o.Store.
func NewTokens(o TokensOptions) *Tokens {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Tokens{o: o, entries: map[string]*entry{}}
	key, err := o.Key, error(nil)
	if key == nil {
		key, err = KeyFromEnv()
	}
	switch {
	case err != nil:
		t.err = err
	case o.Store == nil:
		t.err = errors.New("no database to keep logins in")
	default:
		t.v, t.err = newVault(o.Store, key)
	}
	return t
}

// Token returns the server's access token, refreshing it first when it
// expires within the margin. Errors that only a new login fixes wrap
// mcp.ErrNeedsLogin.
func (t *Tokens) Token(ctx context.Context, server string) (string, error) {
	if t.v == nil {
		return "", fmt.Errorf("%w: %v", mcp.ErrNeedsLogin, t.err)
	}
	e := t.entry(server)
	e.mu.Lock()
	defer e.mu.Unlock()
	t.takeHandoff(server, e)
	if e.refused != nil {
		return "", e.refused
	}
	if e.rec == nil {
		rec, err := t.v.load(server)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return "", fmt.Errorf("%w: no login stored", mcp.ErrNeedsLogin)
		case err != nil && errors.Is(err, store.ErrDamaged):
			return "", err
		case err != nil:
			return "", fmt.Errorf("%w: %v", mcp.ErrNeedsLogin, err)
		}
		e.rec = rec
	}
	if !e.stale && !t.due(e.rec) {
		return e.rec.AccessToken, nil
	}
	if err := t.refresh(ctx, server, e); err != nil {
		return "", err
	}
	return e.rec.AccessToken, nil
}

// takeHandoff replaces e's login with one `deerflow mcp login` handed
// over while the service ran, if there is one. Callers hold e.mu.
func (t *Tokens) takeHandoff(server string, e *entry) {
	if t.o.DataDir == "" {
		return
	}
	rec, err := t.v.takeHandoff(HandoffPath(t.o.DataDir, server), server)
	switch {
	case err != nil:
		t.o.Logger.Warn("mcp oauth: a login handed over could not be taken", "server", server, "err", err)
	case rec != nil:
		e.rec, e.stale, e.refused = rec, false, nil
		t.o.Logger.Info("mcp oauth: took the login made with deerflow mcp login", "server", server)
	}
}

// Refused is told that the server answered 401 to tok: the next Token
// refreshes it (a server may revoke an access token before it expires).
func (t *Tokens) Refused(server, tok string) {
	e := t.entry(server)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rec != nil && e.rec.AccessToken == tok {
		e.stale = true
	}
}

func (t *Tokens) entry(server string) *entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[server]
	if e == nil {
		e = &entry{}
		t.entries[server] = e
	}
	return e
}

// due says whether r's access token is to be refreshed now.
func (t *Tokens) due(r *Record) bool {
	if r.Expiry.IsZero() {
		return r.AccessToken == ""
	}
	margin := t.o.Margin
	if margin <= 0 {
		margin = time.Minute
		if !r.Obtained.IsZero() {
			margin = min(margin, r.Expiry.Sub(r.Obtained)/2)
		}
	}
	return time.Until(r.Expiry) <= margin
}

// refresh gets a new access token with the refresh token (rotated if the
// server rotates it) and stores it.
func (t *Tokens) refresh(ctx context.Context, server string, e *entry) error {
	r := *e.rec
	if r.RefreshToken == "" {
		return fmt.Errorf("%w: the access token expired and there is no refresh token", mcp.ErrNeedsLogin)
	}
	cctx := context.WithValue(ctx, oauth2.HTTPClient, t.o.HTTPClient)
	old := &oauth2.Token{RefreshToken: r.RefreshToken, Expiry: time.Unix(1, 0)}
	tok, err := r.config().TokenSource(cctx, old).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client" ||
			re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized) {
			code := re.ErrorCode
			if code == "" {
				code = re.Response.Status
			}
			e.refused = fmt.Errorf("%w: the authorization server refused the refresh token (%s)", mcp.ErrNeedsLogin, code)
			return e.refused
		}
		return fmt.Errorf("refreshing the OAuth token of MCP server %s: %w", server, err)
	}
	r.setToken(tok)
	r.Obtained = time.Now()
	e.rec, e.stale = &r, false
	if err := t.v.save(server, &r); err != nil {
		// Still good in memory; after a restart the old refresh token
		// (maybe rotated away) is all there is.
		t.o.Logger.Warn("mcp oauth: storing the refreshed token failed", "server", server, "err", err)
	}
	t.o.Logger.Info("mcp oauth: access token refreshed", "server", server, "expires", r.Expiry)
	return nil
}
