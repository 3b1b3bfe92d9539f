package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/redact"
	"github.com/deerflow/deerflow/llm"
)

// Usable is serve's start-up check that every model can answer: GET
// /models for each and, when its list does not settle it, one tiny
// request. It returns a sentence for each model that cannot work (no
// key, key refused, base URL unreachable or answering 404, unknown model
// id), with its fix, and a warning for each failure that may pass by
// itself (rate limits, server errors). At most Parallel models at once.
func Usable(ctx context.Context, models []config.Model, newClient NewClient) (errs, warns []string) {
	type verdict struct {
		msg   string
		fatal bool
	}
	out := make([]verdict, len(models))
	slots := make(chan struct{}, Parallel)
	var wg sync.WaitGroup
	for i, m := range models {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			msg, fatal := usable(ctx, i, m, newClient(m))
			out[i] = verdict{msg, fatal}
		})
	}
	wg.Wait()
	for i, v := range out {
		switch line := fmt.Sprintf("models[%d] (%s): %s", i, models[i].Name, v.msg); {
		case v.msg == "":
		case v.fatal:
			errs = append(errs, line)
		default:
			warns = append(warns, line)
		}
	}
	return errs, warns
}

// usable checks model i: "" when it answers, else what is wrong and
// whether it is sure to stay wrong. The tiny request goes out only when
// the list cannot settle it: the id is not listed (an alias?), or the
// base URL, lacking a version, answers 404 (is /v1 missing?).
func usable(ctx context.Context, i int, m config.Model, c llm.Model) (string, bool) {
	at := fmt.Sprintf("models[%d]", i)
	base := redact.URLs(strings.TrimRight(m.BaseURL, "/"))
	ids, listErr := listModels(ctx, m)
	if listErr == nil && (slices.Contains(ids, m.Model) || slices.Contains(ids, m.Model+":latest")) {
		return "", false
	}
	le, _ := errors.AsType[*llm.Error](listErr)
	switch {
	case listErr == nil:
	case le != nil && le.Kind == llm.KindNoKey:
		return fmt.Sprintf("no api key: set OPENAI_API_KEY or %s.api_key.", at), true
	case le != nil && le.Kind == llm.KindAuth:
		return fmt.Sprintf("%s refuses the api key (HTTP %d): check %s.api_key.", base, le.Status, at), true
	case le != nil && le.Kind == llm.KindUnreachable && le.Status == 0:
		return fmt.Sprintf("cannot reach %s (%s): is the server up, and is %s.base_url right?", base, failure(listErr), at), true
	case le == nil || le.Status != http.StatusNotFound || HasVersion(m.BaseURL):
		// A provider without /models, or one having a bad moment.
		return fmt.Sprintf("GET %s/models failed (%s); the model id was not checked.", base, failure(listErr)), false
	}
	err := tiny(ctx, c)
	ce, _ := errors.AsType[*llm.Error](err)
	switch {
	case err == nil:
		return "", false // listed under another name, or /models is not where the API is
	case ce != nil && ce.Retryable():
		return failure(err) + "; starting anyway, it may pass.", false
	case listErr != nil && ce != nil && ce.Status == http.StatusNotFound:
		return fmt.Sprintf("the base URL %s answers 404; does it need /v1? Set %s.base_url to %s/v1.", base, at, base), true
	case listErr == nil && ce != nil && (ce.Kind == llm.KindModel || mentionsModel(ce)):
		return unknownModel(ctx, at, m) + ".", true
	}
	return failure(err) + fmt.Sprintf(": check %s.", at), true
}

// mentionsModel reports whether a 400 or 404 is about the model id, as
// providers that answer an unknown model with 400 say ("Model Not Exist").
func mentionsModel(e *llm.Error) bool {
	return (e.Status == http.StatusNotFound || e.Status == http.StatusBadRequest) &&
		e.Err != nil && strings.Contains(strings.ToLower(e.Err.Error()), "model")
}

// tiny sends one short request and stops at the first answer chunk.
func tiny(ctx context.Context, c llm.Model) error {
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Reply with the single word: ok"}}}
	for _, err := range c.Stream(ctx, req) {
		return err // the first chunk settles it; leaving cancels the rest
	}
	return errors.New("the stream ended without an answer")
}
