package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/deerflow/deerflow/bus"
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

// saveUploads stores in's attachments in the thread's uploads and puts a
// note naming them in front of the text, so the model knows what arrived
// with this message. A file that cannot be saved is reported to the sender
// in one sentence; the others still go through.
func (r *Router) saveUploads(ctx context.Context, in *bus.Inbound, threadID string) {
	if len(in.Files) == 0 {
		return
	}
	var paths, failed []string
	for _, a := range in.Files {
		if r.opts.SaveUpload == nil {
			failed = append(failed, fmt.Sprintf("%s: I can't receive files here", a.Name))
			continue
		}
		p, err := r.opts.SaveUpload(threadID, a)
		if err != nil {
			r.log.WarnContext(ctx, "saving upload", "chat", in.ChatKey(), "file", a.Name, "err", err)
			failed = append(failed, fmt.Sprintf("%s: %v", a.Name, err))
			continue
		}
		paths = append(paths, p)
	}
	in.Files = nil
	if len(failed) > 0 {
		r.reply(ctx, in, "I couldn't take these files: "+strings.Join(failed, "; ")+".")
	}
	if len(paths) == 0 {
		return
	}
	note := "Files uploaded with this message: " + strings.Join(paths, ", ")
	if r.opts.UploadsNote != nil {
		note = r.opts.UploadsNote(paths)
	}
	if in.Text == "" {
		in.Text = note
		return
	}
	in.Text = note + "\n\n" + in.Text
}
