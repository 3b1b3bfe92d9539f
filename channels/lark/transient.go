package lark

import (
	"errors"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
)

// Lark's other answers that mean "too fast" besides the gateway's
// 99991400: a chat's message limit, and the app's message limit.
const (
	codeChatRateLimit = 230020
	codeSendRateLimit = 11232
)

// limited reports whether Lark refused the call for going too fast.
func (e *apiError) limited() bool {
	switch e.Code {
	case codeRateLimited, codeChatRateLimit, codeSendRateLimit:
		return true
	}
	return false
}

// rateLimited returns the refusal of err when Lark said "too fast".
func rateLimited(err error) (*apiError, bool) {
	var ae *apiError
	return ae, errors.As(err, &ae) && ae.limited()
}

// transient reports whether err is Lark's own trouble (a 5xx answer, or
// the gateway's timeout), which a retry may clear.
func transient(err error) bool {
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae.Status >= 500
	}
	_, ok := errors.AsType[*larkcore.ServerTimeoutError](err)
	return ok
}
