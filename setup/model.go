package setup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/deerflow/deerflow/internal/probe"
	"github.com/deerflow/deerflow/internal/redact"
)

// checkModel asks the endpoint for its models (GET {base}/models); when
// that fails or does not list the model, a one-token chat completion
// decides, and the two answers together say what to fix.
func (a *answers) checkModel(ctx context.Context) (string, error) {
	cfg := openai.DefaultConfig(a.APIKey.Value)
	cfg.BaseURL = strings.TrimRight(a.BaseURL, "/")
	cfg.HTTPClient = &http.Client{Timeout: checkTimeout}
	c := openai.NewClientWithConfig(cfg)
	base := redact.URLs(cfg.BaseURL)
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()

	var ids []string
	list, err := c.ListModels(ctx)
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	switch st := status(err); {
	case err == nil && slices.Contains(ids, a.Model):
		return fmt.Sprintf("Model: %s is served at %s", a.Model, base), nil
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return "", a.keyFault(st)
	case err != nil && st == 0:
		return "", unreachable("the model", a.BaseURL, "--base-url", err, a.APIKey.Value)
	}
	_, cerr := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:     a.Model,
		Messages:  []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Say OK."}},
		MaxTokens: 1,
	})
	return a.modelVerdict(cerr, status(err) == http.StatusNotFound, ids, base)
}

// modelVerdict judges the one-token request's outcome; listed404 tells
// that GET /models answered 404 too, ids are the models it listed.
func (a *answers) modelVerdict(err error, listed404 bool, ids []string, base string) (string, error) {
	st := status(err)
	var msg string
	if ae, ok := errors.AsType[*openai.APIError](err); ok {
		msg = ae.Message
	}
	unknown := (st == http.StatusNotFound || st == http.StatusBadRequest) && strings.Contains(strings.ToLower(msg), "model")
	switch {
	case err == nil:
		return fmt.Sprintf("Model: %s answers at %s", a.Model, base), nil
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return "", a.keyFault(st)
	case st == http.StatusNotFound && listed404 && !probe.HasVersion(a.BaseURL):
		return "", fault("Nothing answers at %s/chat/completions (404): the base URL probably needs /v1 at the end (%s/v1).", base, base)
	case unknown && len(ids) > 0:
		return "", fault("%s does not know the model %q: of the %d it lists, the closest are %s.", base, a.Model, len(ids), strings.Join(probe.Closest(ids, a.Model, 3), ", "))
	case unknown:
		return "", fault("%s does not know the model %q: check the model id in the provider's documentation.", base, a.Model)
	case st == 0:
		return "", unreachable("the model", a.BaseURL, "--base-url", err, a.APIKey.Value)
	}
	return "", fault("%s refused a one-token request for %q (HTTP %d: %s): check the base URL, the model id and the key.", base, a.Model, st, oneLine(scrub(msg, a.APIKey.Value)))
}

func (a *answers) keyFault(st int) error {
	where := "--api-key"
	if a.APIKey.Env != "" {
		where = "$" + a.APIKey.Env
	}
	if a.APIKey.Value == "" {
		return fault("%s needs an API key (%d): set OPENAI_API_KEY or pass --api-key.", redact.URLs(a.BaseURL), st)
	}
	return fault("The model provider says the API key is not valid (%d): check %s, and that the key belongs to %s.", st, where, redact.URLs(a.BaseURL))
}

// status is the HTTP status of a go-openai error, 0 when there was none.
func status(err error) int {
	if ae, ok := errors.AsType[*openai.APIError](err); ok {
		return ae.HTTPStatusCode
	}
	if re, ok := errors.AsType[*openai.RequestError](err); ok {
		return re.HTTPStatusCode
	}
	return 0
}
