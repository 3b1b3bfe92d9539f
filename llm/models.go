package llm

import (
	"context"
	"errors"

	openai "github.com/sashabaranov/go-openai"
)

// ListModels returns the ids of the models the endpoint of o offers
// (GET /models), asked with go-openai's client over o's HTTP client.
// Failures are classified as Stream's are: an *Error (KindAuth for a
// refused key, KindNoKey, KindUnreachable, ...), or ctx.Err() when ctx
// is cancelled. It is not retried.
func ListModels(ctx context.Context, o Options) ([]string, error) {
	c := New(o)
	if o.HTTPClient == nil {
		defer c.hc.CloseIdleConnections() // the transport New made for this call
	}
	if c.noKey {
		return nil, &Error{Kind: KindNoKey, Err: errors.New("no api key for api.openai.com")}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := openai.DefaultConfig(c.apiKey)
	cfg.BaseURL, cfg.HTTPClient = c.baseURL, c.hc
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	list, err := openai.NewClientWithConfig(cfg).ListModels(cctx)
	if err != nil {
		_, err = (&call{c: c, parent: ctx}).fail(cctx, fromOpenAI(err))
		return nil, err
	}
	ids := make([]string, len(list.Models))
	for i, m := range list.Models {
		ids[i] = m.ID
	}
	return ids, nil
}

// fromOpenAI turns go-openai's error responses into our *statusError, for
// classify; other errors (the transport's, decoding's) stay as they are.
func fromOpenAI(err error) error {
	if ae, ok := errors.AsType[*openai.APIError](err); ok && ae.HTTPStatusCode != 0 {
		return &statusError{status: ae.HTTPStatusCode, api: &apiError{*ae}}
	}
	if re, ok := errors.AsType[*openai.RequestError](err); ok && re.HTTPStatusCode != 0 {
		return statusFromBody(re.HTTPStatusCode, re.Body)
	}
	return err
}
