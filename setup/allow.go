package setup

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/internal/lazyre"
)

// problem is one thing for the person to fix, said in one sentence.
type problem struct{ msg string }

func (p *problem) Error() string { return p.msg }

func fault(format string, args ...any) error { return &problem{fmt.Sprintf(format, args...)} }

// sentence is what a person is shown for err: the problem's sentence, or
// the innermost cause of an unexpected error.
func sentence(err error) string {
	if p, ok := errors.AsType[*problem](err); ok {
		return p.msg
	}
	return errText(err) + "."
}

var (
	// A Telegram username: 5 to 32 letters, digits and underscores,
	// starting with a letter (shorter ones from long ago are let in).
	telegramUser = lazyre.New(`^@?[A-Za-z][A-Za-z0-9_]{2,31}$`)
	numericID    = lazyre.New(`^[0-9]+$`)
	slackMember  = lazyre.New(`^[UW][A-Z0-9]{2,}$`)
)

// parseAllow reads platform p's allow list: words separated by commas or
// spaces. A Telegram username gets its @ (the channel matches @name).
func parseAllow(p, s string) ([]string, error) {
	var out []string
	for _, w := range splitList(s) {
		switch {
		case p == "telegram" && numericID().MatchString(w):
		case p == "telegram" && telegramUser().MatchString(w):
			w = "@" + strings.TrimPrefix(w, "@")
		case p == "telegram":
			return nil, fault("%q is neither a Telegram @username nor a numeric user id.", w)
		case p == "slack" && !slackMember().MatchString(w):
			return nil, fault("%q is not a Slack member id: those look like U0123ABCD (in Slack, open the person's profile, then ⋮ → Copy member ID).", w)
		case p == "lark" && strings.HasPrefix(w, "@"):
			return nil, fault("%q is a name, not a Feishu/Lark open id: those look like ou_7d8a6e6df7621556ce0d21922b676706.", w)
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out, nil
}
