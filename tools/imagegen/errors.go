package imagegen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
	"github.com/deerflow/deerflow/web"
)

var (
	errTooLarge = fmt.Errorf("the image is larger than %d MB", MaxBytes>>20)
	errNotImage = errors.New("the answer is not an image")
	errNoImage  = errors.New("the answer holds no image")
)

// policyError is the service's refusal of a prompt under its content
// policy; msg is its own words.
type policyError struct {
	msg string
	err error
}

func (e *policyError) Error() string { return "imagegen: content policy: " + e.err.Error() }
func (e *policyError) Unwrap() error { return e.err }

// sentence is a failure as the model reads it: one sentence, the detail
// kept for logs behind Unwrap.
type sentence struct {
	msg string
	err error
}

func (e *sentence) Error() string { return e.msg }
func (e *sentence) Unwrap() error { return e.err }

// explain turns a failure of generate, or of reading its image, into one
// sentence for the model. The caller's own cancellation stays as it is.
func (g *generator) explain(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return &sentence{msg: g.words(err), err: err}
}

func (g *generator) words(err error) string {
	var pe *policyError
	var le *llm.Error
	switch {
	case errors.As(err, &pe):
		return "The image service refused this prompt under its content policy" + quoted(pe.msg) +
			"; rewrite the prompt without what it objects to, or tell the person this picture cannot be made."
	case errors.Is(err, errTooLarge):
		return fmt.Sprintf("The image service sent an image larger than %d MB, so it was not saved.", MaxBytes>>20)
	case errors.Is(err, errNotImage):
		return "The image service sent data that is not an image, so nothing was saved."
	case errors.Is(err, errNoImage):
		return "The image service answered without an image; try once more, perhaps with a simpler prompt."
	case web.IsBlocked(err):
		return "The image service sent a link to a private or local address, which generate_image does not follow, so nothing was saved."
	case errors.As(err, new(*downloadError)):
		return "The generated image could not be downloaded from the link the image service sent; try once more."
	case !errors.As(err, &le):
		return "The image service failed; tell the person image generation did not work this time."
	}
	return kindWords(le, g.timeout)
}

// kindWords words a classified failure, the way uploads words a failed
// transcription.
func kindWords(e *llm.Error, timeout time.Duration) string {
	switch e.Kind {
	case llm.KindNoKey:
		return "No API key is configured for the image service (image_generation.api_key); tell the person image generation is not set up here."
	case llm.KindAuth:
		return "The image service refused the API key configured for it (image_generation.api_key); tell the person image generation is not working here."
	case llm.KindModel:
		return fmt.Sprintf("The image service does not know the model %q (image_generation.model); tell the person image generation is misconfigured.", e.Model)
	case llm.KindRateLimit:
		return "The image service is rate-limiting requests; tell the person to try again in a moment."
	case llm.KindServer:
		return "The image service is having trouble right now (it failed twice); tell the person to try again later."
	case llm.KindUnreachable:
		if errors.Is(e.Err, context.DeadlineExceeded) {
			return fmt.Sprintf("The image service did not return an image within %s; try once more later, perhaps with a simpler prompt or a smaller size.", timeout)
		}
		return "The image service cannot be reached right now; tell the person to try again later."
	case llm.KindBadRequest:
		return "The image service refused the request" + quoted(e.ProviderMessage) +
			"; check the size (such as 1024x1024) and the prompt, and try once more."
	case llm.KindBadOutput:
		return "The image service sent an answer that could not be read, so nothing was saved."
	}
	return "The image service failed; tell the person image generation did not work this time."
}

// quoted is the service's words for a refusal as a parenthesis, or "".
func quoted(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" {
		return ""
	}
	return " (" + strings.TrimRight(tools.Clip(msg, 300), ".") + ")"
}
