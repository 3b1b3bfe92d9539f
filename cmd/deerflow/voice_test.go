package main

import (
	"bytes"
	"path"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/uploads"
)

// TestVoiceNoteIsHeard: a voice note recorded on each platform reaches
// the speech-to-text endpoint byte for byte; its transcript is the
// message the model answers, and the answer starts by showing it.
func TestVoiceNoteIsHeard(t *testing.T) {
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if strings.Contains(r.Last().Content, "capital of France") {
			return fakeopenai.Turn{Text: "Paris is the capital of France.", Chunk: -1}
		}
		return fakeopenai.Turn{Text: "I didn't hear a question.", Chunk: -1}
	})
	withSTT := func(c *config.Config) {
		c.Transcription = config.Transcription{Model: "whisper-1", BaseURL: model.URL, APIKey: "test-key", TimeoutSeconds: 30, MaxMB: 25}
	}
	ogg := fakeopenai.VoiceNote()
	for _, start := range chatSides(t, model, withSTT) {
		p := start(t)
		t.Run(p.name, func(t *testing.T) {
			heard := len(model.AudioRequests())
			model.ScriptTranscripts("What is the capital of France?")
			p.voice(ogg)
			p.sees("Paris is the capital of France.")
			p.run.app.router.WaitIdle(t.Context())
			p.sees("🎤 “What is the capital of France?”")
			reqs := model.AudioRequests()[heard:]
			if len(reqs) != 1 {
				t.Fatalf("%d transcription requests, want 1", len(reqs))
			}
			if a := reqs[0]; a.Model != "whisper-1" || !bytes.Equal(a.Data, ogg) || path.Ext(a.FileName) == "" {
				t.Errorf("transcription request: model %q, file %q, %d bytes (want the %d sent)", a.Model, a.FileName, len(a.Data), len(ogg))
			}
			last := model.Requests()[len(model.Requests())-1]
			if told := last.Last().Content; !strings.Contains(told, "What is the capital of France?") || !strings.Contains(told, "(a recording, transcribed") {
				t.Errorf("the model was told:\n%s", told)
			}
		})
	}
}

// TestVoiceWithoutTranscription: without a speech-to-text model a voice
// note gets one line saying what is needed, and the model is not asked.
func TestVoiceWithoutTranscription(t *testing.T) {
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "answered", Chunk: -1} })
	for _, start := range chatSides(t, model) {
		p := start(t)
		t.Run(p.name, func(t *testing.T) {
			before := len(model.Requests())
			p.voice(fakeopenai.VoiceNote())
			p.sees(uploads.NoTranscription)
			p.run.app.router.WaitIdle(t.Context())
			if n := len(model.Requests()) - before; n != 0 {
				t.Errorf("the model was asked %d times about a voice note nobody could hear", n)
			}
		})
	}
}

// TestPhotoToAModelWithoutVision: a photo sent to a model that can't see
// images gets one line saying so (and which command lists the others);
// the model is still told the file's path; a model with vision sends no
// such line.
func TestPhotoToAModelWithoutVision(t *testing.T) {
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "noted", Chunk: -1} })
	pic := pngBytes(t)
	for _, start := range chatSides(t, model) {
		p := start(t)
		t.Run(p.name, func(t *testing.T) {
			before := len(model.Requests())
			p.send("dot.png", pic, "what is this?")
			p.sees("The model I'm using can't see images")
			p.sees("noted")
			p.run.app.router.WaitIdle(t.Context())
			if told := model.Requests()[before].Last().Content; !strings.Contains(told, "/mnt/user-data/uploads/dot.png") {
				t.Errorf("the model was told:\n%s", told)
			}
		})
	}
}
