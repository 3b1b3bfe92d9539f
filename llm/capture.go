package llm

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"
)

// ErrorCapture is an HTTP client for OpenAI-compatible endpoints other
// than chat (such as speech-to-text, called through go-openai): it keeps
// an error response (its body, and the Retry-After go-openai does not
// report) so Classify words it like the chat client's own failures.
type ErrorCapture struct {
	HC     *http.Client
	status *statusError
}

// Do sends req, keeping an error response.
func (c *ErrorCapture) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.HC.Do(req)
	if err != nil || resp.StatusCode < http.StatusBadRequest {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	c.status = statusFromBody(resp.StatusCode, body)
	c.status.retryAfter, c.status.hasRetryAfter = retryAfter(resp.Header, time.Now())
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// Err is the error response kept, or nil.
func (c *ErrorCapture) Err() error {
	if c.status == nil {
		return nil
	}
	return c.status
}

// Classify turns a failed request's error (an ErrorCapture's Err, or a
// transport error) into the *Error the chat client would have made, with
// apiKey scrubbed from it, and says whether one more attempt may succeed
// and after how long.
func Classify(err error, model, apiKey string) (e *Error, retry bool, wait time.Duration) {
	e, retry = classify(err, model)
	e.Err = scrub(e.Err, apiKey)
	if e.ProviderMessage != "" {
		e.ProviderMessage = scrub(errors.New(e.ProviderMessage), apiKey).Error()
	}
	wait = backoff(0)
	if se, ok := errors.AsType[*statusError](err); ok && se.hasRetryAfter {
		e.RetryAfter, wait = se.retryAfter, se.retryAfter
		retry = retry && se.retryAfter <= maxRetryAfter
	}
	return e, retry, wait
}

// DefaultTransport is the transport the clients of this package use when
// given none: pooled connections, bounded dial and TLS handshake.
func DefaultTransport() *http.Transport { return defaultTransport() }
