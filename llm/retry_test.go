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
		return fmt.Errorf("wrapped: %w", &openai.APIError{HTTPStatusCode: status, Code: code, Message: "m"})
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
		{"503 html", &openai.RequestError{HTTPStatusCode: 503, Err: errors.New("invalid character")}, KindServer, true},
		{"in-stream server_error", &openai.APIError{Type: "server_error"}, KindServer, true},
		{"in-stream 429", &openai.APIError{Code: 429}, KindRateLimit, true},
		{"in-stream bad request", &openai.APIError{Type: "invalid_request_error"}, KindBadRequest, false},
		{"refused", urlErr(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), KindUnreachable, true},
		{"reset", urlErr(syscall.ECONNRESET), KindUnreachable, true},
		{"eof before response", urlErr(io.EOF), KindUnreachable, true},
		{"dns not found", urlErr(&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}), KindUnreachable, false},
		{"dns temporary", urlErr(&net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}), KindUnreachable, true},
		{"scheme", urlErr(errors.New("unsupported protocol scheme")), KindUnreachable, false},
		{"bad json", json.Unmarshal([]byte("{"), new(any)), KindBadOutput, false},
		{"too many empty", openai.ErrTooManyEmptyStreamMessages, KindBadOutput, false},
		{"client check", openai.ErrReasoningModelMaxTokensDeprecated, KindBadRequest, false},
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
