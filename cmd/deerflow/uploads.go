package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/documents"
	"github.com/deerflow/deerflow/internal/redact"
	"github.com/deerflow/deerflow/llm/transcribe"
	"github.com/deerflow/deerflow/router"
	"github.com/deerflow/deerflow/uploads"
)

// intake builds what takes in the files people send: documents are
// converted in a child process of this binary (see documents.RunChild),
// voice is transcribed by the configured speech-to-text model.
func (a *app) intake() *uploads.Intake {
	opts := uploads.Options{
		Sandbox:   a.sandbox,
		MaxBytes:  int64(a.cfg.Sandbox.MaxUploadMB) << 20,
		Logger:    a.log,
		Converter: converter(a.cfg),
	}
	if t := transcriber(a.cfg); t != nil {
		opts.Transcriber = t
	}
	return uploads.New(opts)
}

// newIntake is the router's SaveUpload.
func (a *app) newIntake() func(ctx context.Context, threadID string, at bus.Attachment) (router.Upload, error) {
	in := a.intake()
	return func(ctx context.Context, threadID string, at bus.Attachment) (router.Upload, error) {
		s, err := in.Save(ctx, threadID, at)
		return router.Upload{Line: s.Line, Notice: s.Notice, Transcript: s.Transcript, Image: s.Image, Unheard: s.Unheard}, err
	}
}

// converter is the documents converter cfg asks for; nil when conversion
// is off.
func converter(cfg *config.Config) *documents.Converter {
	cv := cfg.Uploads.Convert
	if !cv.Enabled {
		return nil
	}
	c := &documents.Converter{Limits: documents.Limits{
		MaxInput:    int64(cv.MaxMB) << 20,
		MaxUnpacked: int64(cv.MaxUnpackedMB) << 20,
		MaxOutput:   cv.MaxMarkdownKB << 10,
		Timeout:     time.Duration(cv.TimeoutSeconds) * time.Second,
	}}
	if exe, err := os.Executable(); err == nil {
		c.Exe = exe
	}
	return c
}

// transcriber is the speech-to-text model cfg names; nil without one.
func transcriber(cfg *config.Config) *transcribe.Transcriber {
	tr := cfg.Transcription
	if tr.Model == "" {
		return nil
	}
	return transcribe.New(transcribe.Config{
		Model: tr.Model, BaseURL: tr.BaseURL, APIKey: tr.APIKey,
		Timeout:  time.Duration(tr.TimeoutSeconds) * time.Second,
		Language: tr.Language, MaxBytes: int64(tr.MaxMB) << 20,
	})
}

// printUploads says what happens to documents and voice notes people send.
func printUploads(w io.Writer, cfg *config.Config) {
	cv := cfg.Uploads.Convert
	if cv.Enabled {
		fmt.Fprintf(w, "uploads\tPDF, Word, Excel, PowerPoint, CSV and HTML converted to Markdown (PDF with %s), up to %d MB and %d s per file\n",
			documents.PDFExtractor(), cv.MaxMB, cv.TimeoutSeconds)
	} else {
		fmt.Fprintf(w, "uploads\tkept as they come, not converted (uploads.convert.enabled: false)\n")
	}
	tr := cfg.Transcription
	if tr.Model == "" {
		fmt.Fprintf(w, "voice\toff: voice notes get a note that transcription needs configuring (transcription.model)\n")
		return
	}
	key := "with an API key"
	if tr.APIKey == "" {
		key = "NO API key"
	}
	fmt.Fprintf(w, "voice\ttranscribed by %s at %s, %s\n", tr.Model, redact.URLs(tr.BaseURL), key)
}
