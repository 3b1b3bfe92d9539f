package llm

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	backoffBase   = time.Second
	backoffCap    = 8 * time.Second
	maxRetryAfter = 60 * time.Second // a longer Retry-After is returned to the caller instead of waited out
	maxErrorBody  = 1 << 20
)

// backoff is the full-jitter delay before retry number attempt+1.
func backoff(attempt int) time.Duration {
	d := backoffCap
	if attempt < 3 {
		d = min(backoffBase<<attempt, backoffCap)
	}
	return rand.N(d) + 1
}

// doer wraps the HTTP client for go-openai, which exposes neither the
// headers of an error response nor closes its body. It hands the
// Retry-After of an error response to the call found in the request
// context, which is per call and so free of races.
type doer struct{ c *http.Client }

func (d doer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if err != nil || resp.StatusCode < http.StatusBadRequest {
		return resp, err
	}
	if k, ok := req.Context().Value(callKey{}).(*call); ok {
		k.retryAfter, k.hasRetryAfter = retryAfter(resp.Header, time.Now())
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// retryAfter reads the delay a server asked for: OpenAI's retry-after-ms,
// or Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(min(s, 1e6) * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
