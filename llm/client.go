package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
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
	oc            *openai.Client
	model         string
	noKey         bool
	timeout       time.Duration
	maxRetries    int
	sendReasoning bool
	key           string // only to scrub it from error text
	logf          func(ctx context.Context, format string, args ...any)
	sleep         func(ctx context.Context, d time.Duration) error
}

var _ Model = (*Client)(nil)

// New returns a Client for o. It does not contact the endpoint.
func New(o Options) *Client {
	c := &Client{
		model:         o.Model,
		timeout:       o.Timeout,
		maxRetries:    max(o.MaxRetries, 0),
		sendReasoning: o.SendReasoning,
		key:           o.APIKey,
		logf:          o.Logf,
		sleep:         o.Sleep,
	}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	if c.logf == nil {
		c.logf = func(context.Context, string, ...any) {}
	}
	if c.sleep == nil {
		c.sleep = sleep
	}
	cfg := openai.DefaultConfig(o.APIKey)
	if o.BaseURL != "" {
		cfg.BaseURL = o.BaseURL
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil && o.APIKey == "" {
		c.noKey = strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: defaultTransport()}
	}
	cfg.HTTPClient = doer{hc}
	// Providers send ": keep-alive" comments while a model thinks; each one
	// counts against this limit between two data events.
	cfg.EmptyMessagesLimit = 100_000
	c.oc = openai.NewClientWithConfig(cfg)
	return c
}

func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConnsPerHost = 16
	t.TLSHandshakeTimeout = 15 * time.Second
	return t
}

// Stream sends req and streams the answer: text and reasoning deltas as
// they arrive, then one chunk with the assembled Response. Failures before
// any data arrived are retried; later ones end the sequence with an *Error.
// When ctx is cancelled the sequence ends with ctx.Err() itself.
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
		oreq, err := c.convert(req, model)
		if err != nil {
			yield(Chunk{}, &Error{Kind: KindBadRequest, Model: model, Err: err})
			return
		}
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		k := &call{c: c, parent: ctx, model: model}
		cctx = context.WithValue(cctx, callKey{}, k)

		st, first, err := k.open(cctx, &oreq)
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		defer st.Close()
		k.read(cctx, st, first, yield)
	}
}

// call is the state of one Stream call. The transport wrapper finds it in
// the request context to hand over the Retry-After of an error response.
type call struct {
	c      *Client
	parent context.Context // the caller's ctx, to tell cancellation from our timeout
	model  string

	retryAfter    time.Duration
	hasRetryAfter bool
}

type callKey struct{}

// open establishes the stream and reads its first event, retrying failures
// that a new attempt may clear.
func (k *call) open(ctx context.Context, oreq *openai.ChatCompletionRequest) (*openai.ChatCompletionStream, openai.ChatCompletionStreamResponse, error) {
	var first openai.ChatCompletionStreamResponse
	for attempt := 0; ; attempt++ {
		k.retryAfter, k.hasRetryAfter = 0, false
		st, err := k.c.oc.CreateChatCompletionStream(ctx, *oreq)
		if err == nil {
			first, err = st.Recv()
			if err == nil {
				return st, first, nil
			}
			if err == io.EOF {
				err = k.emptyStream(st)
			}
			st.Close()
		}
		retry, e := k.fail(ctx, err)
		if !retry || attempt >= k.c.maxRetries {
			return nil, first, e
		}
		d := backoff(attempt)
		if k.hasRetryAfter {
			d = k.retryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return nil, first, e // waiting would only end in our timeout
		}
		k.c.logf(ctx, "llm: %s: attempt %d failed, retrying in %s: %v", k.model, attempt+1, d.Round(time.Millisecond), e)
		if err := k.c.sleep(ctx, d); err != nil {
			return nil, first, k.ctxErr()
		}
	}
}

// fail reports whether sending the request again may clear err, and turns
// err into what the caller gets.
func (k *call) fail(ctx context.Context, err error) (retry bool, _ error) {
	if ctx.Err() != nil {
		return false, k.ctxErr()
	}
	e, retry := classify(err, k.model)
	if k.hasRetryAfter {
		e.RetryAfter = k.retryAfter
		if k.retryAfter > maxRetryAfter {
			retry = false
		}
	}
	e.Err = scrub(e.Err, k.c.key)
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
func (k *call) emptyStream(st *openai.ChatCompletionStream) error {
	if ct := st.Header().Get("Content-Type"); ct != "" && !strings.Contains(ct, "event-stream") {
		return &Error{Kind: KindBadOutput, Model: k.model, Err: fmt.Errorf("response is %q, not an event stream", ct)}
	}
	return &Error{Kind: KindTruncated, Model: k.model, Err: errors.New("stream ended before its first event")}
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
