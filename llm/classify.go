package llm

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	openai "github.com/sashabaranov/go-openai"
)

// classify turns a failure of go-openai or the transport into an *Error,
// and reports whether sending the request again may succeed.
func classify(err error, model string) (*Error, bool) {
	if le, ok := errors.AsType[*Error](err); ok {
		return le, le.Kind == KindTruncated
	}
	e := &Error{Model: model, Err: err}
	if ae, ok := errors.AsType[*openai.APIError](err); ok {
		code, _ := ae.Code.(string)
		if ae.HTTPStatusCode == 0 {
			// An error event inside a 200 stream.
			e.Kind = streamErrorKind(ae, code)
			return e, e.Kind == KindServer || e.Kind == KindRateLimit
		}
		e.Status = ae.HTTPStatusCode
		e.Kind = statusKind(e.Status, code)
		return e, retryStatus(e.Status) && code != "insufficient_quota"
	}
	if re, ok := errors.AsType[*openai.RequestError](err); ok {
		// An error page that is not OpenAI JSON (a proxy's HTML, say):
		// keep a short excerpt, not the whole page, for the logs.
		e.Status = re.HTTPStatusCode
		e.Kind = statusKind(e.Status, "")
		e.Err = fmt.Errorf("%s: %q", re.HTTPStatus, excerpt(re.Body, 200))
		return e, retryStatus(e.Status)
	}
	e.Kind = KindUnreachable
	switch {
	case isJSONError(err), errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		e.Kind = KindBadOutput
		return e, false
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EHOSTUNREACH):
		return e, true
	}
	if de, ok := errors.AsType[*net.DNSError](err); ok {
		return e, de.IsTemporary || de.IsTimeout
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return e, false
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return e, false
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return e, true
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return e, true
	}
	if _, ok := errors.AsType[*url.Error](err); ok {
		return e, false // e.g. an unsupported scheme in the base URL
	}
	// What is left comes from go-openai's own checks of the request.
	e.Kind = KindBadRequest
	return e, false
}

func excerpt(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) <= n {
		return string(b)
	}
	return strings.ToValidUTF8(string(b[:n]), "") + "…"
}

func isJSONError(err error) bool {
	if _, ok := errors.AsType[*json.SyntaxError](err); ok {
		return true
	}
	_, ok := errors.AsType[*json.UnmarshalTypeError](err)
	return ok
}

// statusKind maps an HTTP error status (and OpenAI error code) to a Kind.
func statusKind(status int, code string) Kind {
	switch {
	case code == "model_not_found" || status == 404:
		return KindModel
	case status == 401 || status == 403:
		return KindAuth
	case status == 429:
		return KindRateLimit
	case status == 408 || status == 409 || status == 425:
		// Transient conditions a retry may clear; after retries they read
		// best as the provider's trouble, not as a refused request.
		return KindServer
	case status >= 500:
		return KindServer
	case status >= 400:
		return KindBadRequest
	}
	return KindBadOutput
}

func retryStatus(status int) bool {
	switch status {
	case 408, 409, 425, 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// streamErrorKind classifies an in-stream error event by its code and type;
// providers put either an OpenAI code string or an HTTP status there.
func streamErrorKind(ae *openai.APIError, code string) Kind {
	if n, ok := ae.Code.(int); ok && n >= 400 && n < 600 {
		return statusKind(n, "")
	}
	switch {
	case code == "model_not_found":
		return KindModel
	case code == "invalid_api_key":
		return KindAuth
	case code == "rate_limit_exceeded" || ae.Type == "rate_limit_error":
		return KindRateLimit
	case ae.Type == "invalid_request_error":
		return KindBadRequest
	}
	return KindServer
}

// scrub removes key from err's text, in case a proxy or server echoed it.
func scrub(err error, key string) error {
	if err == nil || len(key) < 4 {
		return err
	}
	if s := err.Error(); strings.Contains(s, key) {
		return errors.New(strings.ReplaceAll(s, key, "[redacted]"))
	}
	return err
}
