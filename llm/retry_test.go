package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/deerflow/deerflow/llm/sse"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{nil, 0, false},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "-1"}, 0, false},
		{map[string]string{"Retry-After": "3", "Retry-After-Ms": "1500"}, 1500 * time.Millisecond, true},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		got, ok := retryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%v) = %v %v, want %v %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	for attempt, limit := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second} {
		for range 100 {
			if d := backoff(attempt); d <= 0 || d > limit {
				t.Fatalf("backoff(%d) = %v, want in (0, %v]", attempt, d, limit)
			}
		}
	}
	if d := backoff(100); d <= 0 || d > backoffCap {
		t.Errorf("backoff(100) = %v", d)
	}
}

func TestClassify(t *testing.T) {
	api := func(status int, code any) error {
		return fmt.Errorf("wrapped: %w", &statusError{status: status, api: &apiError{openai.APIError{Code: code, Message: "m"}}})
	}
	inStream := func(code any, typ string) error {
		return &streamError{apiError{openai.APIError{Code: code, Type: typ}}}
	}
	urlErr := func(err error) error { return &url.Error{Op: "Post", URL: "http://x/v1/chat/completions", Err: err} }
	tests := []struct {
		name  string
		err   error
		kind  Kind
		retry bool
	}{
		{"401", api(401, "invalid_api_key"), KindAuth, false},
		{"403", api(403, nil), KindAuth, false},
		{"404", api(404, nil), KindModel, false},
		{"model_not_found 400", api(400, "model_not_found"), KindModel, false},
		{"408", api(408, nil), KindServer, true},
		{"409", api(409, nil), KindServer, true},
		{"425", api(425, nil), KindServer, true},
		{"429", api(429, "rate_limit_exceeded"), KindRateLimit, true},
		{"429 quota", api(429, "insufficient_quota"), KindRateLimit, false},
		{"400", api(400, "context_length_exceeded"), KindBadRequest, false},
		{"413", api(413, nil), KindBadRequest, false},
		{"500", api(500, nil), KindServer, true},
		{"501", api(501, nil), KindServer, false},
		{"503 html", &statusError{status: 503, body: "<html>"}, KindServer, true},
		{"in-stream server_error", inStream(nil, "server_error"), KindServer, true},
		{"in-stream 429", inStream(float64(429), ""), KindRateLimit, true},
		{"in-stream bad request", inStream(nil, "invalid_request_error"), KindBadRequest, false},
		{"in-stream rate limit code", inStream("rate_limit_exceeded", ""), KindRateLimit, true},
		{"refused", urlErr(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), KindUnreachable, true},
		{"reset", urlErr(syscall.ECONNRESET), KindUnreachable, true},
		{"eof before response", urlErr(io.EOF), KindUnreachable, true},
		{"dns not found", urlErr(&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}), KindUnreachable, false},
		{"dns temporary", urlErr(&net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}), KindUnreachable, true},
		{"scheme", urlErr(errors.New("unsupported protocol scheme")), KindUnreachable, false},
		{"bad json", json.Unmarshal([]byte("{"), new(any)), KindBadOutput, false},
		{"line too long", sse.ErrLineTooLong, KindBadOutput, false},
		{"client check", errors.New("no model configured"), KindBadRequest, false},
		{"ours", &Error{Kind: KindTruncated}, KindTruncated, true},
	}
	for _, tt := range tests {
		e, retry := classify(tt.err, "m")
		if e.Kind != tt.kind || retry != tt.retry {
			t.Errorf("%s: %v, retry %v; want %v, retry %v", tt.name, e.Kind, retry, tt.kind, tt.retry)
		}
	}
}

func TestScrub(t *testing.T) {
	err := scrub(errors.New("proxy said: bad key sk-123456"), "sk-123456")
	if err.Error() != "proxy said: bad key [redacted]" {
		t.Errorf("scrub: %v", err)
	}
	orig := errors.New("fine")
	if scrub(orig, "sk-123456") != orig {
		t.Error("scrub replaced an error without the key")
	}
}

// TestErrorBody: error responses are read with go-openai's APIError, and
// leniently where it refuses them.
func TestErrorBody(t *testing.T) {
	tests := []struct {
		body, message, code, typ string
		status                   int // the status the code names
	}{
		{`{"error":{"message":"bad key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "bad key", "invalid_api_key", "invalid_request_error", 0},
		{`{"error":{"message":["a","b"],"code":429}}`, "a, b", "429", "", 429},
		{`{"error":{"message":"m","code":null}}`, "m", "", "", 0},
		{`{"error":"upstream failed"}`, "upstream failed", "", "", 0},
		{`{"error":{"message":"m","param":3,"code":"c"}}`, "m", "c", "", 0},
		{`{"error":{"type":"server_error","code":502.0}}`, "", "502", "server_error", 502},
	}
	for _, tt := range tests {
		e := statusFromBody(400, []byte(tt.body))
		if e.api == nil || e.api.Message != tt.message || e.api.code() != tt.code || e.api.Type != tt.typ || e.api.status() != tt.status {
			t.Errorf("%s: %+v", tt.body, e.api)
		}
	}
	if e := statusFromBody(502, []byte("<html>bad gateway</html>")); e.api != nil || e.body != "<html>bad gateway</html>" {
		t.Errorf("%+v", e)
	}
}
