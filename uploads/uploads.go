// Package uploads takes in the files that come with a person's message:
// it saves each into the conversation's uploads, converts documents (PDF,
// Word, Excel, PowerPoint, CSV, HTML) to Markdown beside them, and
// transcribes voice notes and audio, so the model gets text it can read
// and the person hears about any file that could not be used.
package uploads

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/documents"
	"github.com/deerflow/deerflow/sandbox"
)

// Transcriber turns a recording into text ("" when no words were heard).
type Transcriber interface {
	Transcribe(ctx context.Context, name string, r io.Reader) (string, error)
}

// Options configure an Intake.
type Options struct {
	Sandbox *sandbox.Manager
	// Converter converts documents; nil keeps them as they came.
	Converter *documents.Converter
	// Transcriber transcribes audio; nil refuses voice with a note.
	Transcriber Transcriber
	MaxBytes    int64 // largest upload kept (0: no limit)
	Logger      *slog.Logger
}

// Intake saves, converts and transcribes uploads.
type Intake struct {
	opts Options
	log  *slog.Logger
}

// New returns an Intake.
func New(opts Options) *Intake {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Intake{opts: opts, log: log}
}

// Saved is one file taken in.
type Saved struct {
	Path string // its virtual path in the uploads
	// Line describes it to the model in the message's uploads note.
	Line string
	// Notice is told to the person: why it could not be read or heard.
	Notice string
	// Transcript is what a recording was heard to say.
	Transcript string
	// Image is set for a picture (only models with vision can look at it).
	Image bool
	// Unheard is set for a recording that could not be transcribed.
	Unheard bool
}

// Save takes in one attachment of a message in thread threadID. An
// error means it was not saved at all, worded for the person ("it is
// larger than the upload limit of 50 MB"); a file that was saved but
// could not be converted or transcribed comes back with a Notice.
func (u *Intake) Save(ctx context.Context, threadID string, a bus.Attachment) (Saved, error) {
	p, err := u.save(threadID, a)
	if err != nil {
		return Saved{}, err
	}
	s := Saved{Path: p, Line: p}
	switch {
	case a.Audio():
		u.transcribe(ctx, threadID, &s)
	case documents.Detect(p) != "":
		u.convert(ctx, threadID, &s)
	case isImage(p, a.MIME):
		s.Image = true
	}
	return s, nil
}

// save stores the attachment in the thread's uploads.
func (u *Intake) save(threadID string, a bus.Attachment) (string, error) {
	limit := u.opts.MaxBytes
	if limit > 0 && a.Size > limit {
		return "", fmt.Errorf("it is larger than the upload limit of %d MB", limit>>20)
	}
	r, err := a.Open()
	if err != nil {
		return "", fmt.Errorf("it could not be downloaded (%v)", err)
	}
	defer r.Close()
	p, err := u.opts.Sandbox.SaveUpload(threadID, a.Name, r, limit)
	if errors.Is(err, sandbox.ErrTooLarge) {
		return "", fmt.Errorf("it is larger than the upload limit of %d MB", limit>>20)
	}
	if err != nil {
		return "", errors.New("it could not be saved")
	}
	return p, nil
}

// isImage reports whether a file is a picture, by its MIME type or name.
func isImage(name, mime string) bool {
	if strings.HasPrefix(mime, "image/") {
		return true
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".jpg", ".jpeg", ".png", ".gif", ".webp", ".heic", ".bmp":
		return true
	}
	return false
}

// base is a virtual path's file name, for sentences to the person.
func base(p string) string { return path.Base(p) }
