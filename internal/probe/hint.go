package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/redact"
	"github.com/deerflow/deerflow/llm"
)

// diagnose turns a failed first request into one line saying what is
// wrong with model i's configuration and how to fix it. The common
// mistakes: a base_url without its /v1, a model id the provider does not
// know, a refused key.
func diagnose(ctx context.Context, i int, m config.Model, err error) string {
	le, ok := errors.AsType[*llm.Error](err)
	if !ok {
		return failure(err)
	}
	at := fmt.Sprintf("models[%d]", i)
	base := redact.URLs(strings.TrimRight(m.BaseURL, "/"))
	switch {
	case le.Kind == llm.KindNoKey:
		return fmt.Sprintf("no api key: set OPENAI_API_KEY or %s.api_key", at)
	case le.Kind == llm.KindAuth:
		return fmt.Sprintf("the api_key is refused (HTTP %d): check %s.api_key, and that it belongs to %s", le.Status, at, base)
	case le.Status == http.StatusNotFound && !HasVersion(m.BaseURL):
		return fmt.Sprintf("HTTP 404 from %s/chat/completions: base_url probably needs /v1 at the end (%s/v1)", base, base)
	case (le.Status == http.StatusNotFound || le.Status == http.StatusBadRequest) && le.Err != nil && strings.Contains(strings.ToLower(le.Err.Error()), "model"):
		return unknownModel(ctx, at, m)
	case le.Status == http.StatusNotFound:
		return fmt.Sprintf("HTTP 404 from %s/chat/completions: check %s.base_url (it should end where /chat/completions starts)", base, at)
	case le.Kind == llm.KindUnreachable && le.Status == 0:
		return fmt.Sprintf("%s: is the server up, and is %s.base_url (%s) right?", failure(err), at, base)
	}
	return failure(err)
}

// unknownModel says the provider refused the model id, with the ids it
// lists that come closest, when GET /models answers.
func unknownModel(ctx context.Context, at string, m config.Model) string {
	msg := fmt.Sprintf("the provider does not know the model %q: check %s.model", m.Model, at)
	ids, err := listModels(ctx, m)
	if err != nil {
		return msg + " (GET " + redact.URLs(strings.TrimRight(m.BaseURL, "/")) + "/models did not list its models: " + redact.URLs(err.Error()) + ")"
	}
	if len(ids) == 0 {
		return msg + " (GET /models lists none)"
	}
	return fmt.Sprintf("%s; of the %d it lists, the closest: %s", msg, len(ids), strings.Join(Closest(ids, m.Model, 5), ", "))
}

// failure describes an error in one line for an operator: its kind and
// status, and the provider's message (never the key: llm scrubs it).
func failure(err error) string {
	if le, ok := errors.AsType[*llm.Error](err); ok {
		msg := le.Kind.String()
		if le.Status != 0 {
			msg += fmt.Sprintf(" (HTTP %d)", le.Status)
		}
		if le.Err != nil {
			msg += ": " + strings.TrimPrefix(le.Err.Error(), fmt.Sprintf("status %d: ", le.Status))
		}
		return redact.URLs(oneLine(msg, 300))
	}
	return redact.URLs(oneLine(err.Error(), 300))
}

// oneLine fits s on one line of at most n runes, without a closing full
// stop (a hint follows it).
func oneLine(s string, n int) string {
	s = strings.TrimRight(strings.Join(strings.Fields(s), " "), ".")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// versionSegment is a path segment naming an API version: v1, v1beta, v4.
var versionSegment = regexp.MustCompile(`^v[0-9]+[a-z0-9]*$`)

// HasVersion reports whether base has a version segment in its path, as
// every OpenAI-compatible base URL does (/v1, /api/v1, /v1beta/openai,
// /api/paas/v4, /compatible-mode/v1).
func HasVersion(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return true // nothing to suggest
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if versionSegment.MatchString(seg) {
			return true
		}
	}
	return false
}

// listModels asks the endpoint for its model ids (GET {base_url}/models,
// through go-openai's client).
func listModels(ctx context.Context, m config.Model) ([]string, error) {
	return llm.ListModels(ctx, llm.Options{BaseURL: m.BaseURL, APIKey: m.APIKey, Timeout: Timeout})
}

// Closest returns up to n of ids nearest to want by edit distance
// (ignoring case), nearest first.
func Closest(ids []string, want string, n int) []string {
	type scored struct {
		id   string
		dist int
	}
	all := make([]scored, len(ids))
	for i, id := range ids {
		all[i] = scored{id, editDistance(strings.ToLower(id), strings.ToLower(want))}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.dist - b.dist })
	out := make([]string, 0, n)
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.id)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
