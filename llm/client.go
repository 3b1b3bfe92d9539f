package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/deerflow/deerflow/llm/sse"
)

const defaultTimeout = 10 * time.Minute

// Options configures a Client.
type Options struct {
	BaseURL string // OpenAI-compatible base URL, e.g. "https://api.openai.com/v1"; empty means that one
	APIKey  string // may be empty for endpoints other than api.openai.com (local servers)
	Model   string // used when Request.Model is empty

	// Timeout bounds a whole call, the stream included. 0 means 10 minutes.
	Timeout time.Duration
	// MaxRetries is how many times a request that failed before any data
	// arrived is sent again. Negative means 0; the caller picks the default.
	MaxRetries int
	// HTTPClient sends the requests. nil means a client of our own with a
	// pooled transport; its Timeout should be 0 (Timeout above bounds calls).
	HTTPClient *http.Client
	// SendReasoning sends assistant messages' Reasoning back to the
	// provider as reasoning_content. Some providers reject it.
	SendReasoning bool
	// ReasoningEffort is sent as "reasoning_effort"; "" sends none.
	ReasoningEffort string
	// Thinking switches the model's reasoning on or off with the
	// provider's own switch (see thinking.go); the zero value sends none.
	Thinking Thinking
	// ExtraBody is merged into every request's JSON (objects recursively,
	// other values replace ours), for provider switches we don't know.
	ExtraBody map[string]any
	// Logf receives retry notes, with the request's context. nil
	// discards them.
	Logf func(ctx context.Context, format string, args ...any)
	// Sleep waits d or until ctx is done, returning ctx.Err() then. nil
	// means a real timer; tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client is a Model speaking the OpenAI chat completions protocol. It is
// safe for concurrent use; reuse one per endpoint so connections are pooled.
type Client struct {
	hc            *http.Client
	url           string // the chat completions endpoint
	baseURL       string
	apiKey        string
	model         string
	noKey         bool
	timeout       time.Duration
	maxRetries    int
	sendReasoning bool
	effort        string
	thinking      Thinking
	extraBody     map[string]any
	tools         toolCache
	logf          func(ctx context.Context, format string, args ...any)
	sleep         func(ctx context.Context, d time.Duration) error
}

var _ Model = (*Client)(nil)

const defaultBaseURL = "https://api.openai.com/v1"

// New returns a Client for o. It does not contact the endpoint.
func New(o Options) *Client {
	c := &Client{
		hc:            o.HTTPClient,
		baseURL:       o.BaseURL,
		apiKey:        o.APIKey,
		model:         o.Model,
		timeout:       o.Timeout,
		maxRetries:    max(o.MaxRetries, 0),
		sendReasoning: o.SendReasoning,
		effort:        o.ReasoningEffort,
		thinking:      o.Thinking,
		extraBody:     o.ExtraBody,
		logf:          o.Logf,
		sleep:         o.Sleep,
	}
	if c.baseURL == "" {
		c.baseURL = defaultBaseURL
	}
	c.url = strings.TrimRight(c.baseURL, "/") + "/chat/completions"
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	if c.logf == nil {
		c.logf = func(context.Context, string, ...any) {}
	}
	if c.sleep == nil {
		c.sleep = sleep
	}
	if u, err := url.Parse(c.baseURL); err == nil && o.APIKey == "" {
		c.noKey = strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: defaultTransport()}
	}
	return c
}

// Provider names who answers requests for model: the base URL and the
// model joined by "|". It is what Message.Provider holds.
func (c *Client) Provider(model string) string {
	if model == "" {
		model = c.model
	}
	return strings.TrimRight(c.baseURL, "/") + "|" + model
}

func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConnsPerHost = 100
	t.TLSHandshakeTimeout = 15 * time.Second
	return t
}

// Stream sends req and streams the answer: text and reasoning deltas as
// they arrive, then one chunk with the assembled Response. Failures before
// any data arrived are retried; later ones end the sequence with an *Error
// whose Partial holds the text streamed so far. When ctx is cancelled the
// sequence ends with ctx.Err() itself.
func (c *Client) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		model := c.model
		if req != nil && req.Model != "" {
			model = req.Model
		}
		if c.noKey {
			yield(Chunk{}, &Error{Kind: KindNoKey, Model: model, Err: errors.New("no api key for api.openai.com")})
			return
		}
		if req == nil {
			yield(Chunk{}, &Error{Kind: KindBadRequest, Model: model, Err: errors.New("nil request")})
			return
		}
		if err := ctx.Err(); err != nil {
			yield(Chunk{}, err)
			return
		}
		body, err := c.body(req, model)
		if err != nil {
			yield(Chunk{}, &Error{Kind: KindBadRequest, Model: model, Err: err})
			return
		}
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		k := &call{c: c, parent: ctx, model: model, provider: c.Provider(model)}
		resp, st, first, err := k.open(cctx, body)
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		defer resp.Body.Close()
		k.read(cctx, st, first, yield)
	}
}

// call is the state of one Stream call.
type call struct {
	c        *Client
	parent   context.Context // the caller's ctx, to tell cancellation from our timeout
	model    string
	provider string
}

// open sends the request and reads the stream's first event, retrying
// failures that a new attempt may clear.
func (k *call) open(ctx context.Context, body []byte) (*http.Response, *sse.Reader, *wireChunk, error) {
	for attempt := 0; ; attempt++ {
		resp, err := k.post(ctx, body)
		if err == nil {
			st := sse.NewReader(resp.Body)
			var first *wireChunk
			if first, err = nextChunk(st); err == nil && first == nil {
				err = emptyStream(resp, k.model)
			}
			if err == nil {
				return resp, st, first, nil
			}
			resp.Body.Close()
		}
		retry, e := k.fail(ctx, err)
		if !retry || attempt >= k.c.maxRetries {
			return nil, nil, nil, e
		}
		d := backoff(attempt)
		var se *statusError
		if errors.As(err, &se) && se.hasRetryAfter {
			d = se.retryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return nil, nil, nil, e // waiting would only end in our timeout
		}
		k.c.logf(ctx, "llm: %s: attempt %d failed, retrying in %s: %v", k.model, attempt+1, d.Round(time.Millisecond), e)
		if err := k.c.sleep(ctx, d); err != nil {
			return nil, nil, nil, k.ctxErr()
		}
	}
}

// post sends the request; an error status comes back as a *statusError.
func (k *call) post(ctx context.Context, body []byte) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, k.c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Cache-Control", "no-cache")
	if k.c.apiKey != "" {
		hr.Header.Set("Authorization", "Bearer "+k.c.apiKey)
	}
	resp, err := k.c.hc.Do(hr)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < http.StatusBadRequest {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, newStatusError(resp)
}

// fail reports whether sending the request again may clear err, and turns
// err into what the caller gets.
func (k *call) fail(ctx context.Context, err error) (retry bool, _ error) {
	if ctx.Err() != nil {
		return false, k.ctxErr()
	}
	e, retry := classify(err, k.model)
	var se *statusError
	if errors.As(err, &se) && se.hasRetryAfter {
		e.RetryAfter = se.retryAfter
		if se.retryAfter > maxRetryAfter {
			retry = false
		}
	}
	e.Err = scrub(e.Err, k.c.apiKey)
	if e.ProviderMessage != "" {
		e.ProviderMessage = scrub(errors.New(e.ProviderMessage), k.c.apiKey).Error()
	}
	return retry, e
}

// ctxErr is the error for a done ctx: the caller's own cancellation as is,
// or our Timeout as a classified error. A timeout is not KindTruncated even
// mid-stream, so that callers do not spend another whole Timeout on it.
func (k *call) ctxErr() error {
	if err := k.parent.Err(); err != nil {
		return err
	}
	return &Error{Kind: KindUnreachable, Model: k.model, Err: fmt.Errorf("no complete answer within %s: %w", k.c.timeout, context.DeadlineExceeded)}
}

// emptyStream explains a 200 response that ended before its first event.
func emptyStream(resp *http.Response, model string) error {
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.Contains(ct, "event-stream") {
		return &Error{Kind: KindBadOutput, Model: model, Err: fmt.Errorf("response is %q, not an event stream", ct)}
	}
	return &Error{Kind: KindTruncated, Model: model, Err: errors.New("stream ended before its first event")}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
