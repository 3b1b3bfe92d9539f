package telegram

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// serverError is a Bot API answer with a 5xx status: Telegram's own
// trouble or a proxy's error page in front of it, worth another try. The
// client library reports these only as text (and an HTML 502 page as a
// JSON decoding error), so the transport turns them into this error.
type serverError struct{ Status int }

func (e *serverError) Error() string {
	return fmt.Sprintf("telegram: server error %d %s", e.Status, http.StatusText(e.Status))
}

// serverErrors returns a copy of hc whose transport reports 5xx answers as
// a *serverError.
func serverErrors(hc *http.Client) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = statusTransport{base}
	return &c
}

type statusTransport struct{ base http.RoundTripper }

func (t statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 500 {
		return resp, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return nil, &serverError{Status: resp.StatusCode}
}

// transient reports whether err is a server error a retry may clear.
func transient(err error) bool {
	var se *serverError
	return errors.As(err, &se)
}
