package imagegen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// downloadError is a url answer that could not be fetched.
type downloadError struct{ err error }

func (e *downloadError) Error() string { return "imagegen: download: " + e.err.Error() }
func (e *downloadError) Unwrap() error { return e.err }

// checkLink refuses links other than http(s) ones with a host and no
// credentials.
func checkLink(u *url.URL) error {
	if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Host == "" || u.User != nil {
		return errors.New("the image link is not a plain http(s) URL")
	}
	return nil
}

// download fetches the image a url answer names, up to MaxBytes.
func (g *generator) download(ctx context.Context, raw string) ([]byte, error) {
	u, err := url.Parse(raw)
	if err == nil {
		err = checkLink(u)
	}
	if err != nil {
		return nil, &downloadError{err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &downloadError{err: err}
	}
	resp, err := g.fetch.Do(req)
	if err != nil {
		return nil, &downloadError{err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &downloadError{err: fmt.Errorf("status %d", resp.StatusCode)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, g.max+1))
	switch {
	case err != nil:
		return nil, &downloadError{err: err}
	case int64(len(data)) > g.max:
		return nil, errTooLarge
	}
	return data, nil
}
