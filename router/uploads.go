package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/progress"
)

// reattach gives the attachments of a message read back from the store
// (after a restart) their Open, through the channel.
func (r *Router) reattach(in *bus.Inbound) {
	s, _ := r.out.Sender(in.Channel)
	ra, _ := s.(bus.Reattacher)
	for i := range in.Files {
		a := &in.Files[i]
		if a.Open != nil {
			continue
		}
		if ra != nil && a.Ref != "" {
			a.Open = ra.Reattach(a.Ref)
			continue
		}
		a.Open = func() (io.ReadCloser, error) {
			return nil, errors.New("it could not be fetched again after a restart")
		}
	}
}

// Upload is a file saved for a message (Options.SaveUpload).
type Upload struct {
	// Line describes the file to the model: its path, and its Markdown
	// version or transcript where there is one.
	Line string
	// Notice is told to the person: why the file could not be read or
	// heard.
	Notice string
	// Transcript is what a recording was heard to say: it stands for the
	// message's text (after a caption).
	Transcript string
	// Image marks a picture: a model without vision is told only its path,
	// and the person that it can't see it.
	Image bool
	// Unheard marks a recording that could not be transcribed.
	Unheard bool
}

// saveUploads stores in's attachments in the thread's uploads and puts a
// note naming them in front of the text, so the model knows what arrived
// with this message; a voice note's transcript becomes the text, and is
// shown above the answer (d). What could not be saved, read or heard is
// told to the sender in one message; the rest still goes through. A
// message of voice notes none of which could be heard ends with that
// message (in.Text stays empty).
func (r *Router) saveUploads(ctx context.Context, in *bus.Inbound, threadID string, d *progress.Delivery) {
	if len(in.Files) == 0 {
		return
	}
	var lines, failed, notices, said []string
	images, unheard := false, 0
	for _, a := range in.Files {
		if r.opts.SaveUpload == nil {
			failed = append(failed, fmt.Sprintf("%s: I can't receive files here", a.Name))
			continue
		}
		up, err := r.opts.SaveUpload(ctx, threadID, a)
		if err != nil {
			r.log.WarnContext(ctx, "saving upload", "chat", in.ChatKey(), "file", a.Name, "err", err)
			failed = append(failed, fmt.Sprintf("%s: %v", a.Name, err))
			continue
		}
		lines = append(lines, up.Line)
		notices = appendNonEmpty(notices, up.Notice)
		said = appendNonEmpty(said, up.Transcript)
		images = images || up.Image
		if up.Unheard {
			unheard++
		}
	}
	in.Files = nil
	if len(failed) > 0 {
		notices = append(notices, "I couldn't take these files: "+strings.Join(failed, "; ")+".")
	}
	if images && !r.sees(threadID) {
		notices = append(notices, "The model I'm using can't see images, so I have only the picture's file, not what it shows (/models lists the others).")
	}
	if len(notices) > 0 {
		r.reply(ctx, in, strings.Join(notices, "\n"))
	}
	if len(lines) == 0 || (unheard == len(lines) && strings.TrimSpace(in.Text) == "") {
		return
	}
	if len(said) > 0 {
		heard := strings.Join(said, "\n\n")
		d.Preface(heardLine(heard))
		in.Text = strings.TrimSpace(in.Text + "\n\n" + heard)
	}
	note := "Files uploaded with this message: " + strings.Join(lines, ", ")
	if r.opts.UploadsNote != nil {
		note = r.opts.UploadsNote(lines)
	}
	if in.Text == "" {
		in.Text = note
		return
	}
	in.Text = note + "\n\n" + in.Text
}

func appendNonEmpty(list []string, s string) []string {
	if s == "" {
		return list
	}
	return append(list, s)
}

// sees reports whether the thread's model can look at images.
func (r *Router) sees(threadID string) bool {
	var name string
	if t, err := r.opts.Store.Thread(threadID); err == nil {
		name = t.Model
	}
	m, _ := r.opts.Agent.Model(name)
	return m.Vision
}

// heardLine shows a person what their voice note was heard to say, above
// the answer: the transcript, cut to a few lines.
func heardLine(transcript string) string {
	const max = 400
	if len(transcript) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(transcript[cut]) {
			cut--
		}
		transcript = strings.TrimSpace(transcript[:cut]) + "…"
	}
	return "🎤 “" + strings.Join(strings.Fields(transcript), " ") + "”"
}
