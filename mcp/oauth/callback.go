package oauth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// callback is where the browser comes back with the code: a listener on
// a loopback address, or, for a redirect URL elsewhere, nothing (the
// operator pastes the address).
type callback struct {
	redirect string
	results  chan pasteResult // nil without a listener
	srv      *http.Server
	done     chan struct{}
}

type pasteResult struct {
	res *auth.AuthorizationResult
	err error
}

// listenCallback listens for the redirect: on 127.0.0.1 at a free port
// when redirect is empty, or on a loopback redirect's own address.
func listenCallback(redirect string) (*callback, error) {
	addr, path := "127.0.0.1:0", "/callback"
	if redirect != "" {
		u, err := url.Parse(redirect)
		if err != nil {
			return nil, fmt.Errorf("oauth.redirect_url: %w", err)
		}
		if u.Scheme != "http" || !loopback(u.Hostname()) {
			return &callback{redirect: redirect}, nil // the operator pastes it
		}
		addr, path = u.Host, u.Path
		if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
		if path == "" {
			path = "/"
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for the login's redirect on %s: %w", addr, err)
	}
	if redirect == "" {
		redirect = "http://" + ln.Addr().String() + path
	}
	cb := &callback{redirect: redirect, results: make(chan pasteResult, 1), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+path, cb.serve)
	cb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(cb.done)
		_ = cb.srv.Serve(ln)
	}()
	return cb, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (cb *callback) serve(w http.ResponseWriter, r *http.Request) {
	res, err := fromRedirect(r.URL.Query(), "")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "deerflow: the login failed: %v\n", err)
	} else {
		fmt.Fprintln(w, "deerflow: logged in. You may close this tab.")
	}
	select {
	case cb.results <- pasteResult{res, err}:
	default: // a result is there already
	}
}

func (cb *callback) close() {
	if cb.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = cb.srv.Shutdown(ctx)
	<-cb.done
}

// fromRedirect reads the code (or the error) from the query of the
// redirect; state is used when the query has none (a bare code pasted).
func fromRedirect(q url.Values, state string) (*auth.AuthorizationResult, error) {
	if e := q.Get("error"); e != "" {
		if d := q.Get("error_description"); d != "" {
			e += ": " + d
		}
		return nil, fmt.Errorf("the authorization server refused the login: %s", e)
	}
	code := q.Get("code")
	if code == "" {
		return nil, errNoCode
	}
	if q.Has("state") {
		state = q.Get("state")
	}
	return &auth.AuthorizationResult{Code: code, State: state, Iss: q.Get("iss")}, nil
}

// readPaste reads lines from in until one is the redirect address (or a
// bare code, taken as answering link).
func readPaste(in io.Reader, link string, out chan<- pasteResult) {
	var state string
	if u, err := url.Parse(link); err == nil {
		state = u.Query().Get("state")
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var res *auth.AuthorizationResult
		var err error
		switch {
		case line == "":
			continue
		case strings.Contains(line, "://"):
			u, perr := url.Parse(line)
			if perr != nil {
				continue
			}
			res, err = fromRedirect(u.Query(), state)
		default:
			res = &auth.AuthorizationResult{Code: line, State: state}
		}
		if errors.Is(err, errNoCode) {
			continue
		}
		out <- pasteResult{res, err}
		return
	}
}
