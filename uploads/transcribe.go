package uploads

import (
	"context"
	"errors"
	"fmt"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/llm/transcribe"
	"github.com/deerflow/deerflow/sandbox"
)

// NoTranscription is what a person who sent a voice note is told when no
// speech-to-text model is configured.
const NoTranscription = "I can't listen to voice messages here: that needs a speech-to-text model (the transcription key in deerflow's config). Please type your message."

// transcribe turns a recording into text: the transcript is kept beside
// it as Markdown and becomes (part of) the message.
func (u *Intake) transcribe(ctx context.Context, threadID string, s *Saved) {
	name := base(s.Path)
	if u.opts.Transcriber == nil {
		s.Unheard, s.Notice = true, NoTranscription
		s.Line += " (a recording; not transcribed: no speech-to-text model is configured)"
		return
	}
	f, err := u.opts.Sandbox.OpenUpload(threadID, s.Path)
	if err != nil {
		s.Unheard, s.Notice = true, fmt.Sprintf("I couldn't open %s to listen to it.", name)
		return
	}
	text, err := u.opts.Transcriber.Transcribe(ctx, name, f)
	f.Close()
	switch {
	case err != nil:
		if errors.Is(err, context.Canceled) {
			s.Unheard = true
			return
		}
		u.log.WarnContext(ctx, "transcribing", "file", name, "err", err)
		s.Unheard, s.Notice = true, fmt.Sprintf("I couldn't transcribe %s: %s.", name, heardErr(err))
		s.Line += " (a recording; transcription failed)"
		return
	case text == "":
		s.Unheard, s.Notice = true, fmt.Sprintf("I couldn't make out any words in %s.", name)
		s.Line += " (a recording; no words were heard in it)"
		return
	}
	s.Transcript = text
	s.Line += " (a recording, transcribed"
	if md, err := u.opts.Sandbox.SaveBeside(threadID, s.Path, sandbox.ConvertedSuffix, text+"\n"); err == nil {
		s.Line += " → " + md
	}
	s.Line += ")"
}

// heardErr words a transcription failure for the person who spoke.
func heardErr(err error) string {
	var e *llm.Error
	switch {
	case errors.Is(err, transcribe.ErrTooLarge):
		return "it is longer than the speech-to-text service takes"
	case !errors.As(err, &e):
		return "the speech-to-text service failed"
	}
	switch e.Kind {
	case llm.KindNoKey, llm.KindAuth:
		return "the speech-to-text service refused the key configured for it"
	case llm.KindModel:
		return fmt.Sprintf("the speech-to-text service does not know the model %q", e.Model)
	case llm.KindRateLimit:
		return "the speech-to-text service is busy; please send it again in a moment"
	case llm.KindServer, llm.KindUnreachable:
		return "the speech-to-text service is unavailable right now; please try again in a moment"
	}
	return "the speech-to-text service refused it"
}
