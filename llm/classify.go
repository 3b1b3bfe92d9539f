package llm

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/deerflow/deerflow/llm/sse"
)

// classify turns a failure of the request, the transport or the stream
// into an *Error, and reports whether sending the request again may
// succeed.
func classify(err error, model string) (*Error, bool) {
	if le, ok := errors.AsType[*Error](err); ok {
		return le, le.Kind == KindTruncated
	}
	e := &Error{Model: model, Err: err}
	if se, ok := errors.AsType[*streamError](err); ok {
		// An error event inside a 200 stream.
		e.Kind, e.ProviderMessage = streamErrorKind(&se.api), se.api.Message
		return e, e.Kind == KindServer || e.Kind == KindRateLimit
	}
	if se, ok := errors.AsType[*statusError](err); ok {
		e.Status = se.status
		code := ""
		if se.api != nil {
			code, e.ProviderMessage = se.api.code(), se.api.Message
		}
		e.Kind = statusKind(e.Status, code)
		return e, retryStatus(e.Status) && code != "insufficient_quota"
	}
	e.Kind = KindUnreachable
	switch {
	case isJSONError(err), errors.Is(err, sse.ErrLineTooLong):
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
	e.Kind = KindBadRequest // what is left: building the request failed
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

// streamErrorKind classifies an in-stream error by its code and type;
// providers put either an OpenAI code string or an HTTP status there.
func streamErrorKind(ae *apiError) Kind {
	if n := ae.status(); n != 0 {
		return statusKind(n, "")
	}
	switch code := ae.code(); {
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
