package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

var errNoDone = errors.New("stream ended without a final chunk")

// Kind classifies a model failure by what a caller can do about it.
type Kind int

const (
	KindUnknown     Kind = iota
	KindNoKey            // no API key configured for a provider that needs one
	KindAuth             // 401/403: the key was refused
	KindModel            // 404 / model_not_found: unknown model
	KindUnreachable      // connection refused, DNS, TLS, timeout before any answer
	KindRateLimit        // 429 after retries
	KindServer           // 5xx after retries
	KindBadRequest       // other 4xx: the request itself was refused (context too long, ...)
	KindTruncated        // the stream was cut before a finish_reason arrived
	KindBadOutput        // the provider sent something that could not be decoded
)

// Error is a classified model failure. Err holds the underlying detail for
// logs; UserMessage is the one sentence a person sees.
type Error struct {
	Kind       Kind
	Status     int           // HTTP status, when there was one
	RetryAfter time.Duration // from Retry-After, when present
	Model      string
	Err        error
	// ProviderMessage is the provider's own words for the failure, when it
	// sent some (an error response or event); empty otherwise.
	ProviderMessage string
	// Partial is the answer text streamed before a failure in mid-stream;
	// the caller has shown it already.
	Partial string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("llm: %s (status %d): %v", e.Kind, e.Status, e.Err)
	}
	return fmt.Sprintf("llm: %s: %v", e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same request may succeed if sent again.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindUnreachable, KindRateLimit, KindServer, KindTruncated:
		return true
	}
	return false
}

func (k Kind) String() string {
	switch k {
	case KindNoKey:
		return "no api key"
	case KindAuth:
		return "authentication failed"
	case KindModel:
		return "unknown model"
	case KindUnreachable:
		return "endpoint unreachable"
	case KindRateLimit:
		return "rate limited"
	case KindServer:
		return "server error"
	case KindBadRequest:
		return "request refused"
	case KindTruncated:
		return "stream truncated"
	case KindBadOutput:
		return "bad output"
	}
	return "error"
}

// UserMessage returns one plain sentence for a chat user describing err. It
// never contains the error's internal detail.
func UserMessage(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return "Something went wrong while talking to the model; please try again."
	}
	switch e.Kind {
	case KindNoKey:
		return "No API key is configured for the model, so I can't answer yet: set OPENAI_API_KEY or the model's api_key."
	case KindAuth:
		return "The model provider rejected the API key; please check the configured key."
	case KindModel:
		if e.Model != "" {
			return fmt.Sprintf("The model provider does not know the model %q; please check the model name.", e.Model)
		}
		return "The model provider does not know the configured model; please check the model name."
	case KindUnreachable:
		if errors.Is(e.Err, context.DeadlineExceeded) { // our Timeout: it was reached, but slow
			return "The model took too long to answer; please try again in a moment."
		}
		return "I can't reach the model endpoint right now; please try again in a moment."
	case KindRateLimit:
		return "The model provider is rate-limiting requests; please try again in a moment."
	case KindServer:
		return "The model provider is having trouble right now; please try again in a moment."
	case KindBadRequest:
		return "The model provider refused this request; try /new to start a fresh conversation."
	case KindTruncated:
		return "The model's answer was cut off; please try again."
	case KindBadOutput:
		return "The model sent an answer I could not read; please try again."
	}
	return "Something went wrong while talking to the model; please try again."
}
