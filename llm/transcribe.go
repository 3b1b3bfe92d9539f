package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// MaxAudioBytes is the largest recording Transcribe sends: OpenAI's limit
// for /audio/transcriptions (25 MB). Voice notes are far smaller.
const MaxAudioBytes = 25 << 20

// ErrAudioTooLarge is wrapped by Transcribe's *Error (KindBadRequest)
// for a recording over MaxAudioBytes; nothing was sent then.
var ErrAudioTooLarge = errors.New("the recording is larger than the transcription limit of 25 MB")

const (
	defaultTranscribeModel   = openai.Whisper1
	defaultTranscribeTimeout = 2 * time.Minute
)

// TranscriberConfig configures a Transcriber: an OpenAI-compatible
// speech-to-text endpoint (POST <BaseURL>/audio/transcriptions).
type TranscriberConfig struct {
	Model   string // e.g. "whisper-1" (the default), "gpt-4o-mini-transcribe"
	BaseURL string // e.g. "https://api.openai.com/v1" (the default)
	APIKey  string // may be empty for endpoints other than api.openai.com
	// HTTPClient sends the requests; nil means a pooled client of our own.
	// Its Timeout should be 0 (Timeout below bounds calls).
	HTTPClient *http.Client
	// Timeout bounds a whole Transcribe call, its retry included. 0 means
	// two minutes.
	Timeout time.Duration
	// Language is an ISO-639-1 hint ("en", "de"); "" lets the model detect
	// the language.
	Language string
	// MaxBytes is the largest recording sent; 0 or more than MaxAudioBytes
	// means MaxAudioBytes.
	MaxBytes int64
}

// Transcriber turns recorded speech (voice notes) into text. It is safe
// for concurrent use.
type Transcriber struct {
	model, baseURL, apiKey string
	noKey                  bool
	hc                     *http.Client
	timeout                time.Duration
	language               string
	maxBytes               int64
	sleep                  func(ctx context.Context, d time.Duration) error // tests replace it
}

// NewTranscriber returns a Transcriber for cfg. It does not contact the
// endpoint.
func NewTranscriber(cfg TranscriberConfig) *Transcriber {
	t := &Transcriber{model: cfg.Model, baseURL: cfg.BaseURL, apiKey: cfg.APIKey,
		hc: cfg.HTTPClient, timeout: cfg.Timeout, sleep: sleep, language: cfg.Language, maxBytes: cfg.MaxBytes}
	if t.maxBytes <= 0 || t.maxBytes > MaxAudioBytes {
		t.maxBytes = MaxAudioBytes
	}
	if t.model == "" {
		t.model = defaultTranscribeModel
	}
	if t.baseURL == "" {
		t.baseURL = defaultBaseURL
	}
	if t.timeout <= 0 {
		t.timeout = defaultTranscribeTimeout
	}
	if t.hc == nil {
		t.hc = &http.Client{Transport: defaultTransport()}
	}
	if u, err := url.Parse(t.baseURL); err == nil && cfg.APIKey == "" {
		t.noKey = strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	return t
}

// Transcribe sends the recording read from r, a file called name (its
// extension tells the service the format: voice_1.ogg, clip.webm), and
// returns what was said, trimmed; "" with a nil error when the service
// heard no words.
//
// r is read whole first (up to the MaxBytes configured): a larger recording is
// refused before anything is sent, and the bytes can be sent again. A 429,
// a 5xx or a dropped connection is retried once, after the Retry-After
// the service asked for (up to a minute) or a short backoff. Failures are
// *Error, classified like the chat model's (KindAuth: the key was refused;
// KindRateLimit; KindServer, KindUnreachable: the service is unavailable),
// except the caller's own cancellation, returned as ctx.Err().
func (t *Transcriber) Transcribe(ctx context.Context, name string, r io.Reader) (string, error) {
	if t.noKey {
		return "", &Error{Kind: KindNoKey, Model: t.model, Err: errors.New("no api key for api.openai.com")}
	}
	data, err := io.ReadAll(io.LimitReader(r, t.maxBytes+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("reading the recording: %w", err)
	case int64(len(data)) > t.maxBytes:
		return "", &Error{Kind: KindBadRequest, Model: t.model, Err: ErrAudioTooLarge}
	case len(data) == 0:
		return "", &Error{Kind: KindBadRequest, Model: t.model, Err: errors.New("the recording is empty")}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	name = uploadName(name)
	for attempt := 0; ; attempt++ {
		text, err := t.send(cctx, name, data)
		if err == nil {
			return strings.TrimSpace(text), nil
		}
		e, retry, wait := t.fail(ctx, cctx, err)
		if !retry || attempt > 0 {
			return "", e
		}
		if dl, ok := cctx.Deadline(); ok && time.Until(dl) < wait {
			return "", e // waiting would only end in our timeout
		}
		if t.sleep(cctx, wait) != nil {
			return "", t.ctxErr(ctx)
		}
	}
}

// send makes one request through go-openai. An error response comes back
// as the *statusError the chat client would have made of it.
func (t *Transcriber) send(ctx context.Context, name string, data []byte) (string, error) {
	cfg := openai.DefaultConfig(t.apiKey)
	cfg.BaseURL = t.baseURL
	doer := &errorCapture{hc: t.hc}
	cfg.HTTPClient = doer
	resp, err := openai.NewClientWithConfig(cfg).CreateTranscription(ctx, openai.AudioRequest{
		Model: t.model, FilePath: name, Reader: bytes.NewReader(data), Format: openai.AudioResponseFormatJSON,
		Language: t.language,
	})
	if doer.status != nil {
		return "", doer.status
	}
	if err != nil {
		return "", err
	}
	return resp.Text, nil
}

// fail classifies err, and reports whether one more attempt may succeed
// and after how long. parent is the caller's ctx, ctx ours (with Timeout).
func (t *Transcriber) fail(parent, ctx context.Context, err error) (_ error, retry bool, wait time.Duration) {
	if ctx.Err() != nil {
		return t.ctxErr(parent), false, 0
	}
	e, retry := classify(err, t.model)
	e.Err = scrub(e.Err, t.apiKey)
	if e.ProviderMessage != "" {
		e.ProviderMessage = scrub(errors.New(e.ProviderMessage), t.apiKey).Error()
	}
	wait = backoff(0)
	if se, ok := errors.AsType[*statusError](err); ok && se.hasRetryAfter {
		e.RetryAfter, wait = se.retryAfter, se.retryAfter
		retry = retry && se.retryAfter <= maxRetryAfter
	}
	return e, retry, wait
}

// ctxErr is the error for a done ctx: the caller's own cancellation as is,
// or our Timeout as a classified error.
func (t *Transcriber) ctxErr(parent context.Context) error {
	if err := parent.Err(); err != nil {
		return err
	}
	return &Error{Kind: KindUnreachable, Model: t.model,
		Err: fmt.Errorf("no transcript within %s: %w", t.timeout, context.DeadlineExceeded)}
}

// uploadName is the file name the service gets. It tells formats by the
// extension, and OpenAI's list (flac m4a mp3 mp4 mpeg mpga oga ogg wav
// webm) has no .opus: an Opus recording (Feishu/Lark's voice notes) is in
// an Ogg container, so it goes as .ogg.
func uploadName(name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	switch {
	case name == "" || name == "." || name == "/":
		return "voice.ogg"
	case strings.EqualFold(path.Ext(name), ".opus"):
		return strings.TrimSuffix(name, path.Ext(name)) + ".ogg"
	}
	return name
}

// errorCapture is the http.Client go-openai sends through: it keeps an
// error response (its body, and the Retry-After go-openai does not
// report) as the chat client's *statusError, so both classify alike.
type errorCapture struct {
	hc     *http.Client
	status *statusError
}

func (c *errorCapture) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil || resp.StatusCode < http.StatusBadRequest {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	c.status = statusFromBody(resp.StatusCode, body)
	c.status.retryAfter, c.status.hasRetryAfter = retryAfter(resp.Header, time.Now())
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}
