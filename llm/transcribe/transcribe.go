// Package transcribe turns recorded speech (voice notes) into text with an
// OpenAI-compatible /audio/transcriptions endpoint, its failures
// classified like the chat model's (llm.Error).
//
// It imports llm.
package transcribe

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

	"github.com/deerflow/deerflow/llm"
)

// MaxBytes is the largest recording Transcribe sends: OpenAI's limit
// for /audio/transcriptions (25 MB). Voice notes are far smaller.
const MaxBytes = 25 << 20

// ErrTooLarge is wrapped by Transcribe's *llm.Error (llm.KindBadRequest)
// for a recording over MaxBytes; nothing was sent then.
var ErrTooLarge = errors.New("the recording is larger than the transcription limit of 25 MB")

const (
	defaultModel   = openai.Whisper1
	defaultBaseURL = "https://api.openai.com/v1"
	defaultTimeout = 2 * time.Minute
)

// Config configures a Transcriber: an OpenAI-compatible
// speech-to-text endpoint (POST <BaseURL>/audio/transcriptions).
type Config struct {
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
	// MaxBytes is the largest recording sent; 0 or more than MaxBytes
	// means MaxBytes.
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

// New returns a Transcriber for cfg. It does not contact the
// endpoint.
func New(cfg Config) *Transcriber {
	t := &Transcriber{model: cfg.Model, baseURL: cfg.BaseURL, apiKey: cfg.APIKey,
		hc: cfg.HTTPClient, timeout: cfg.Timeout, sleep: sleep, language: cfg.Language, maxBytes: cfg.MaxBytes}
	if t.maxBytes <= 0 || t.maxBytes > MaxBytes {
		t.maxBytes = MaxBytes
	}
	if t.model == "" {
		t.model = defaultModel
	}
	if t.baseURL == "" {
		t.baseURL = defaultBaseURL
	}
	if t.timeout <= 0 {
		t.timeout = defaultTimeout
	}
	if t.hc == nil {
		t.hc = &http.Client{Transport: llm.DefaultTransport()}
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
// *llm.Error, classified like the chat model's (llm.KindAuth: the key was refused;
// llm.KindRateLimit; llm.KindServer, llm.KindUnreachable: the service is unavailable),
// except the caller's own cancellation, returned as ctx.Err().
func (t *Transcriber) Transcribe(ctx context.Context, name string, r io.Reader) (string, error) {
	if t.noKey {
		return "", &llm.Error{Kind: llm.KindNoKey, Model: t.model, Err: errors.New("no api key for api.openai.com")}
	}
	data, err := io.ReadAll(io.LimitReader(r, t.maxBytes+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("reading the recording: %w", err)
	case int64(len(data)) > t.maxBytes:
		return "", &llm.Error{Kind: llm.KindBadRequest, Model: t.model, Err: ErrTooLarge}
	case len(data) == 0:
		return "", &llm.Error{Kind: llm.KindBadRequest, Model: t.model, Err: errors.New("the recording is empty")}
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
	doer := &llm.ErrorCapture{HC: t.hc}
	cfg.HTTPClient = doer
	resp, err := openai.NewClientWithConfig(cfg).CreateTranscription(ctx, openai.AudioRequest{
		Model: t.model, FilePath: name, Reader: bytes.NewReader(data), Format: openai.AudioResponseFormatJSON,
		Language: t.language,
	})
	if err := doer.Err(); err != nil {
		return "", err
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
	return llm.Classify(err, t.model, t.apiKey)
}

// ctxErr is the error for a done ctx: the caller's own cancellation as is,
// or our Timeout as a classified error.
func (t *Transcriber) ctxErr(parent context.Context) error {
	if err := parent.Err(); err != nil {
		return err
	}
	return &llm.Error{Kind: llm.KindUnreachable, Model: t.model,
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
