package slack

import (
	"errors"
	"time"

	"github.com/slack-go/slack"
)

// rateLimited returns how long a 429 asks to wait, within reason.
func rateLimited(err error) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) {
		return 0, false
	}
	return min(max(rl.RetryAfter, time.Second), time.Minute), true
}

// transient reports whether err is Slack's own trouble (a 5xx), which a
// retry may clear.
func transient(err error) bool {
	var sc slack.StatusCodeError
	return errors.As(err, &sc) && sc.Code >= 500
}
