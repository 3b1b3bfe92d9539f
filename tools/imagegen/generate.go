package imagegen

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/web"
)

// generator is generate_image's state. It is safe for concurrent use.
type generator struct {
	model, baseURL, apiKey, size string
	noKey                        bool
	timeout                      time.Duration
	hc                           *http.Client // the endpoint
	fetch                        *http.Client // url answers: public addresses only
	out                          Outputs
	max                          int64                                            // largest image saved: MaxBytes; tests lower it
	sleep                        func(ctx context.Context, d time.Duration) error // tests replace it
}

func newGenerator(o Options) *generator {
	g := &generator{model: o.Model, baseURL: o.BaseURL, apiKey: o.APIKey, size: o.Size,
		timeout: o.Timeout, hc: o.HTTPClient, fetch: web.PublicClient(), out: o.Outputs, sleep: sleep, max: MaxBytes}
	if g.baseURL == "" {
		g.baseURL = defaultBaseURL
	}
	if g.timeout <= 0 {
		g.timeout = defaultTimeout
	}
	if g.hc == nil {
		g.hc = &http.Client{Transport: llm.DefaultTransport()}
	}
	if u, err := url.Parse(g.baseURL); err == nil && g.apiKey == "" {
		g.noKey = strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	return g
}

// generate returns the image for prompt, and the prompt as the service
// rewrote it ("" when it did not say). A 429, a 5xx or a dropped
// connection is retried once, after the Retry-After asked for (up to a
// minute) or a short backoff, all within the timeout. Failures are the
// package's own errors (errTooLarge, errNotImage, ...), a *policyError,
// or an *llm.Error classified like the chat model's; the caller's own
// cancellation is ctx.Err().
func (g *generator) generate(ctx context.Context, prompt, size string) ([]byte, string, error) {
	if g.noKey {
		return nil, "", &llm.Error{Kind: llm.KindNoKey, Model: g.model, Err: errors.New("no api key for api.openai.com")}
	}
	cctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		data, revised, err := g.send(cctx, prompt, size)
		if err == nil {
			return data, revised, nil
		}
		e, retry, wait := g.fail(ctx, cctx, err)
		if !retry || attempt > 0 {
			return nil, "", e
		}
		if dl, ok := cctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, "", e // waiting would only end in our timeout
		}
		if g.sleep(cctx, wait) != nil {
			return nil, "", g.ctxErr(ctx)
		}
	}
}

// send makes one request through go-openai and reads its image.
func (g *generator) send(ctx context.Context, prompt, size string) ([]byte, string, error) {
	cfg := openai.DefaultConfig(g.apiKey)
	cfg.BaseURL = g.baseURL
	capture := &llm.ErrorCapture{HC: g.hc}
	cfg.HTTPClient = capped{next: capture, max: g.max/3*4 + 1<<20} // the image in base64, and room for the JSON around it
	req := openai.ImageRequest{Model: g.model, Prompt: prompt, N: 1, Size: size}
	if !alwaysBase64(g.model) {
		req.ResponseFormat = openai.CreateImageResponseFormatB64JSON
	}
	resp, err := openai.NewClientWithConfig(cfg).CreateImage(ctx, req)
	if cerr := capture.Err(); cerr != nil {
		if msg, ok := policyRefusal(err); ok {
			return nil, "", &policyError{msg: msg, err: cerr}
		}
		return nil, "", cerr
	}
	if err != nil {
		return nil, "", err
	}
	return g.image(ctx, resp)
}

// alwaysBase64 reports whether model is one of OpenAI's GPT Image models,
// which always answer b64_json and refuse a response_format.
func alwaysBase64(model string) bool {
	m := strings.ToLower(model)
	return strings.HasPrefix(m, "gpt-image") || strings.HasPrefix(m, "chatgpt-image")
}

// policyRefusal reports whether go-openai's err is a refusal under the
// service's content policy (DALL-E's content_policy_violation, GPT
// Image's moderation_blocked), and the service's words for it.
func policyRefusal(err error) (string, bool) {
	ae, ok := errors.AsType[*openai.APIError](err)
	if !ok {
		return "", false
	}
	code, _ := ae.Code.(string)
	switch {
	case code == "content_policy_violation", code == "moderation_blocked", ae.Type == "image_generation_user_error":
		return ae.Message, true
	}
	return "", false
}

// image reads the first image of resp: decoded from b64_json, or fetched
// from its url.
func (g *generator) image(ctx context.Context, resp openai.ImageResponse) ([]byte, string, error) {
	if len(resp.Data) == 0 {
		return nil, "", errNoImage
	}
	d := resp.Data[0]
	var data []byte
	var err error
	switch {
	case d.B64JSON != "":
		if data, err = base64.StdEncoding.DecodeString(strings.TrimSpace(d.B64JSON)); err != nil {
			return nil, "", fmt.Errorf("%w: b64_json: %v", errNotImage, err)
		}
	case d.URL != "":
		if data, err = g.download(ctx, d.URL); err != nil {
			return nil, "", err
		}
	default:
		return nil, "", errNoImage
	}
	if int64(len(data)) > g.max {
		return nil, "", errTooLarge
	}
	return data, d.RevisedPrompt, nil
}

// fail classifies err, and reports whether one more attempt may succeed
// and after how long. parent is the caller's ctx, ctx ours (with the
// timeout).
func (g *generator) fail(parent, ctx context.Context, err error) (_ error, retry bool, wait time.Duration) {
	if ctx.Err() != nil {
		return g.ctxErr(parent), false, 0
	}
	var pe *policyError
	var de *downloadError
	switch {
	case errors.Is(err, errTooLarge), errors.Is(err, errNotImage), errors.Is(err, errNoImage),
		errors.As(err, &pe), errors.As(err, &de):
		return err, false, 0
	}
	return llm.Classify(err, g.model, g.apiKey)
}

// ctxErr is the error for a done ctx: the caller's own cancellation as is,
// or our timeout as a classified error.
func (g *generator) ctxErr(parent context.Context) error {
	if err := parent.Err(); err != nil {
		return err
	}
	return &llm.Error{Kind: llm.KindUnreachable, Model: g.model,
		Err: fmt.Errorf("no image within %s: %w", g.timeout, context.DeadlineExceeded)}
}

// capped is the endpoint's client with every successful answer cut at
// max bytes: reading past it fails with errTooLarge instead of filling
// memory.
type capped struct {
	next openai.HTTPDoer
	max  int64
}

func (c capped) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(req)
	if err == nil && resp.StatusCode < http.StatusBadRequest {
		resp.Body = &limitBody{ReadCloser: resp.Body, left: c.max}
	}
	return resp, err
}

// limitBody reads at most left bytes, then fails with errTooLarge.
type limitBody struct {
	io.ReadCloser
	left int64
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err // EOF (or the read error) as the body has it
	}
	p = p[:min(int64(len(p)), b.left)]
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
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
