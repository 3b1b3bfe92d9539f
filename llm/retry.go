package llm

import (
	"encoding/json"
	"fmt"
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

// statusError is an HTTP error response: its status, its error object
// when it has one, else an excerpt of its body, and its Retry-After.
type statusError struct {
	status        int
	api           *apiError
	body          string
	retryAfter    time.Duration
	hasRetryAfter bool
}

func newStatusError(resp *http.Response) *statusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := statusFromBody(resp.StatusCode, body)
	e.retryAfter, e.hasRetryAfter = retryAfter(resp.Header, time.Now())
	return e
}

// statusFromBody reads an error response's body: an error object as
// go-openai's ErrorResponse has it ({"error": {...}}), or (some servers)
// {"error": "text"}.
func statusFromBody(status int, body []byte) *statusError {
	e := &statusError{status: status}
	var frame struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &frame) == nil && frame.Error != nil {
		e.api = frame.Error
	} else {
		// An error page that is not OpenAI JSON (a proxy's HTML, say):
		// keep a short excerpt, not the whole page, for the logs.
		e.body = excerpt(body, 200)
	}
	return e
}

func (e *statusError) Error() string {
	if e.api != nil {
		return fmt.Sprintf("status %d: %s", e.status, e.api.Message)
	}
	return fmt.Sprintf("status %d: %q", e.status, e.body)
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
