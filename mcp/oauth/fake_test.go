package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// authServer is an OAuth 2.1 authorization server (RFC 8414 metadata,
// RFC 7591 registration, authorization code with PKCE S256 only, exact
// redirect_uri match, single-use codes, rotated refresh tokens) that
// approves every authorization request at once: the test's HTTP client
// is the browser and the user.
type authServer struct {
	*httptest.Server
	life time.Duration // of an access token

	mu      sync.Mutex
	clients map[string]*client   // by client_id
	codes   map[string]*grant    // unused codes
	access  map[string]time.Time // valid access tokens and their expiry
	refresh map[string]*grant    // valid refresh tokens
	issued  []string             // every token issued
	counts  map[string]int       // requests by grant type
}

type client struct {
	id, secret string
	redirects  []string
}

type grant struct {
	client, redirect, challenge, resource, scope string
}

func newAuthServer() *authServer {
	as := &authServer{life: time.Hour, clients: map[string]*client{}, codes: map[string]*grant{},
		access: map[string]time.Time{}, refresh: map[string]*grant{}, counts: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", as.metadata)
	mux.HandleFunc("POST /register", as.register)
	mux.HandleFunc("GET /authorize", as.authorize)
	mux.HandleFunc("POST /token", as.token)
	as.Server = httptest.NewServer(mux)
	return as
}

func (as *authServer) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                as.URL,
		"authorization_endpoint":                as.URL + "/authorize",
		"token_endpoint":                        as.URL + "/token",
		"registration_endpoint":                 as.URL + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		"scopes_supported":                      []string{"tools", "offline_access"},
	})
}

// register is RFC 7591 §3: a public client (auth method none) gets no
// secret.
func (as *authServer) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		GrantTypes   []string `json:"grant_types"`
		ClientName   string   `json:"client_name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
		return
	}
	for _, u := range md.RedirectURIs {
		if p, err := url.Parse(u); err != nil || p.Fragment != "" || (p.Scheme != "https" && p.Hostname() != "127.0.0.1") {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
			return
		}
	}
	c := &client{id: "c-" + rand.Text(), redirects: md.RedirectURIs}
	out := map[string]any{"client_id": c.id, "client_id_issued_at": time.Now().Unix(), "redirect_uris": c.redirects,
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none", "client_name": md.ClientName}
	if md.AuthMethod != "none" {
		c.secret = rand.Text()
		out["client_secret"], out["token_endpoint_auth_method"] = c.secret, "client_secret_basic"
	}
	as.mu.Lock()
	as.clients[c.id] = c
	as.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

// authorize approves at once, after the checks that come before any
// redirect (unknown client, redirect_uri not registered exactly: no
// redirect at all) and those reported through it.
func (as *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	as.mu.Lock()
	defer as.mu.Unlock()
	c := as.clients[q.Get("client_id")]
	if c == nil || !slices.Contains(c.redirects, q.Get("redirect_uri")) {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(q.Get("redirect_uri"))
	bq := back.Query()
	bq.Set("state", q.Get("state"))
	switch {
	case q.Get("response_type") != "code":
		bq.Set("error", "unsupported_response_type")
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		bq.Set("error", "invalid_request")
		bq.Set("error_description", "PKCE with S256 is required")
	default:
		code := rand.Text()
		as.codes[code] = &grant{client: c.id, redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
			resource: q.Get("resource"), scope: q.Get("scope")}
		bq.Set("code", code)
	}
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (as *authServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	gt := r.PostForm.Get("grant_type")
	as.counts[gt]++
	c := as.authenticate(r)
	if c == nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	var g *grant
	switch gt {
	case "authorization_code":
		code := r.PostForm.Get("code")
		g = as.codes[code]
		delete(as.codes, code) // single use, whatever follows
		if g == nil || g.client != c.id || g.redirect != r.PostForm.Get("redirect_uri") || !pkceOK(r.PostForm.Get("code_verifier"), g.challenge) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		g = as.refresh[rt]
		delete(as.refresh, rt) // rotated
		if g == nil || g.client != c.id {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := "at-"+rand.Text(), "rt-"+rand.Text()
	as.access[access] = time.Now().Add(as.life)
	as.refresh[refresh] = g
	as.issued = append(as.issued, access, refresh)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer",
		"expires_in": int(as.life.Seconds()), "refresh_token": refresh, "scope": g.scope})
}

// authenticate is the client of a token request: client_secret_basic,
// client_secret_post, or a public client naming itself.
func (as *authServer) authenticate(r *http.Request) *client {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	c := as.clients[id]
	if c == nil || subtle.ConstantTimeCompare([]byte(c.secret), []byte(secret)) != 1 {
		return nil
	}
	return c
}

func pkceOK(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
}

// preregister adds a confidential client, as an operator would.
func (as *authServer) preregister(id, secret, redirect string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.clients[id] = &client{id: id, secret: secret, redirects: []string{redirect}}
}

// dropAccess ends one access token (its refresh token stays good).
func (as *authServer) dropAccess(tok string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	delete(as.access, tok)
}

// valid says whether an access token may be used now.
func (as *authServer) valid(tok string) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	exp, ok := as.access[tok]
	return ok && time.Now().Before(exp)
}

// revoke ends every grant: tokens in use and refresh tokens alike.
func (as *authServer) revoke() {
	as.mu.Lock()
	defer as.mu.Unlock()
	clear(as.access)
	clear(as.refresh)
}

func (as *authServer) count(grantType string) int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.counts[grantType]
}

// protected is a Streamable HTTP MCP server that wants a bearer token
// from as (RFC 9728 metadata at the path-inserted well-known address).
func protected(as *authServer, srv *sdk.Server) *httptest.Server {
	return protectedHandler(as, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
}

// protectedHandler is h (at /mcp, and below it for SSE's message
// endpoint) behind a bearer token from as.
func protectedHandler(as *authServer, h http.Handler) *httptest.Server {
	mux := http.NewServeMux()
	ts := httptest.NewUnstartedServer(mux)
	ts.Start()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": ts.URL + "/mcp", "authorization_servers": []string{as.URL},
			"scopes_supported": []string{"tools"}, "bearer_methods_supported": []string{"header"}})
	})
	guard := func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !as.valid(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp", scope="tools"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}
	mux.HandleFunc("/mcp", guard)
	mux.HandleFunc("/mcp/", guard)
	return ts
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// browser follows the authorization link as a browser would, through
// the redirect to the callback listener.
func browser(ctx context.Context, link string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}
