package telegram

import (
	"bytes"
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

// bufferedBody is how much of a request body of unknown length is read
// before it is sent. The client library streams every call's form through
// a pipe, a field at a time; sent as it comes, a one-line sendMessage took
// a dozen socket writes, each a hop between goroutines and a system call.
// Read first, a text call goes out in one write with its length; a large
// upload still streams past the first part.
const bufferedBody = 256 << 10

func (t statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req, err := buffer(req)
	if err != nil {
		return nil, err
	}
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

// buffer returns req with the start of a body of unknown length read
// ahead (all of it, up to bufferedBody).
func buffer(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength > 0 {
		return req, nil
	}
	head, err := io.ReadAll(io.LimitReader(req.Body, bufferedBody))
	if err != nil {
		req.Body.Close()
		return nil, err
	}
	r := new(http.Request)
	*r = *req // a RoundTripper must not change the request it was given
	if len(head) < bufferedBody {
		req.Body.Close()
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(head)), int64(len(head))
		if len(head) == 0 {
			r.Body = http.NoBody
		}
		return r, nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), req.Body), req.Body}
	return r, nil
}
