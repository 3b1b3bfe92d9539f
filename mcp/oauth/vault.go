// Package oauth logs deerflow in to remote MCP servers with OAuth 2.1 and
// keeps their tokens: `deerflow mcp login NAME` (Login, CLI) runs the
// authorization code flow with PKCE, and Tokens gives the mcp package a
// current access token for each request, refreshing it before it
// expires.
//
// Discovery, registration and PKCE are the MCP SDK's (auth and oauthex:
// RFC 9728 protected resource metadata, RFC 8414 authorization server
// metadata, RFC 7591 dynamic client registration); the token requests
// are golang.org/x/oauth2's. Tokens are stored in the store's state
// bucket under "mcp:oauth:<server>", sealed with AES-256-GCM under a key
// from $DEERFLOW_SECRET_KEY; without the key nothing is stored.
//
// It imports mcp (for ErrNeedsLogin), config and store; mcp must not
// import it.
package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/deerflow/deerflow/store"
)

// KeyEnv is the environment variable holding the key that seals tokens.
const KeyEnv = "DEERFLOW_SECRET_KEY"

// ErrNoKey: $DEERFLOW_SECRET_KEY is not set.
var ErrNoKey = errors.New(KeyEnv + " is not set: OAuth tokens are stored encrypted with it " +
	"(32 bytes, base64 or hex, e.g. from `openssl rand -hex 32`)")

// KeyFromEnv reads the sealing key from $DEERFLOW_SECRET_KEY.
func KeyFromEnv() ([]byte, error) { return ParseKey(os.Getenv(KeyEnv)) }

// ParseKey decodes a 32-byte key written as hex or base64 (standard or
// URL alphabet, padded or not).
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrNoKey
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s must be 32 bytes written as 64 hex digits or base64", KeyEnv)
}

// Record is what a login leaves for one server: how to refresh, and the
// tokens.
type Record struct {
	URL          string    `json:"url"` // the server's URL at login; another URL needs a new login
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	AuthStyle    int       `json:"auth_style"` // oauth2.AuthStyle
	TokenURL     string    `json:"token_url"`
	Scopes       []string  `json:"scopes,omitempty"`
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry"`   // zero: does not expire
	Obtained     time.Time `json:"obtained"` // when the access token was issued
}

func (r *Record) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: r.ClientID, ClientSecret: r.ClientSecret, Scopes: r.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: r.TokenURL, AuthStyle: oauth2.AuthStyle(r.AuthStyle)},
	}
}

func (r *Record) setToken(t *oauth2.Token) {
	r.AccessToken, r.TokenType, r.Expiry = t.AccessToken, t.TokenType, t.Expiry
	if t.RefreshToken != "" {
		r.RefreshToken = t.RefreshToken // rotated
	}
}

// stateKey is where a server's record is kept in the store.
func stateKey(server string) string { return "mcp:oauth:" + server }

// vault seals records into the store.
type vault struct {
	db   *store.Store
	aead cipher.AEAD
}

func newVault(db *store.Store, key []byte) (*vault, error) {
	if len(key) == 0 {
		return nil, ErrNoKey
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("oauth: key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("oauth: key: %w", err)
	}
	return &vault{db: db, aead: aead}, nil
}

const sealVersion = 1

// save seals r, bound to the server's name, and stores it.
func (v *vault) save(server string, r *Record) error {
	sealed, err := v.seal(server, r)
	if err != nil {
		return err
	}
	return v.db.Update(func(tx *store.Tx) error { return tx.PutState(stateKey(server), sealed) })
}

// seal encrypts r, bound to the server's name.
func (v *vault) seal(server string, r *Record) ([]byte, error) {
	plain, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, v.aead.NonceSize())
	rand.Read(nonce)
	sealed := append([]byte{sealVersion}, nonce...)
	return v.aead.Seal(sealed, nonce, plain, []byte(stateKey(server))), nil
}

// load returns the server's record; store.ErrNotFound without one.
func (v *vault) load(server string) (*Record, error) {
	var sealed []byte
	err := v.db.View(func(tx *store.Tx) (err error) {
		sealed, err = tx.State(stateKey(server))
		return err
	})
	if err != nil {
		return nil, err
	}
	return v.open(server, sealed)
}

// open decrypts what seal made for server.
func (v *vault) open(server string, sealed []byte) (*Record, error) {
	n := v.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return nil, fmt.Errorf("the stored login of %s is damaged", server)
	}
	plain, err := v.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(stateKey(server)))
	if err != nil {
		return nil, fmt.Errorf("the stored login of %s cannot be opened with this %s (was the key changed?)", server, KeyEnv)
	}
	var r Record
	if err := json.Unmarshal(plain, &r); err != nil {
		return nil, fmt.Errorf("the stored login of %s is damaged: %w", server, err)
	}
	return &r, nil
}
