package uploads

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/documents"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/sandbox"
)

const thread = "t1"

// ears is a Transcriber that hears what it is told to, and records what
// reached it.
type ears struct {
	text string
	err  error
	got  map[string]string
}

func (e *ears) Transcribe(ctx context.Context, name string, r io.Reader) (string, error) {
	b, _ := io.ReadAll(r)
	if e.got == nil {
		e.got = map[string]string{}
	}
	e.got[name] = string(b)
	return e.text, e.err
}

func newIntake(t *testing.T, tr Transcriber, max int64) (*Intake, *sandbox.Manager) {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	opts := Options{Sandbox: sb, Converter: &documents.Converter{}, MaxBytes: max, Logger: slog.New(slog.DiscardHandler)}
	if tr != nil {
		opts.Transcriber = tr
	}
	return New(opts), sb
}

func file(name, data string) bus.Attachment {
	return bus.Attachment{Name: name, Size: int64(len(data)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(data)), nil
	}}
}

// read returns a file of the thread's uploads.
func read(t *testing.T, sb *sandbox.Manager, vpath string) string {
	t.Helper()
	f, err := sb.OpenUpload(thread, vpath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b)
}

// TestDocumentIsConvertedBeside: a CSV arrives, its Markdown is written
// beside it, and the model's line names both with the sheet count.
func TestDocumentIsConvertedBeside(t *testing.T) {
	in, sb := newIntake(t, nil, 0)
	s, err := in.Save(context.Background(), thread, file("prices.csv", "item,price\nmilk,1.20\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Saved{Path: "/mnt/user-data/uploads/prices.csv", Line: "/mnt/user-data/uploads/prices.csv (CSV, 1 sheet) → Markdown: /mnt/user-data/uploads/prices.csv.md"}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Fatalf("saved (-want +got):\n%s", diff)
	}
	if md := read(t, sb, "/mnt/user-data/uploads/prices.csv.md"); !strings.Contains(md, "| milk | 1.20 |") {
		t.Errorf("markdown = %q", md)
	}
	list, _ := sb.ListUploads(thread)
	if len(list) != 1 || list[0].Markdown != "/mnt/user-data/uploads/prices.csv.md" {
		t.Errorf("uploads listed = %+v", list)
	}
}

// TestBadDocumentIsKeptAndTold: a damaged document is saved as it came;
// the person is told why it can't be read, the model too.
func TestBadDocumentIsKeptAndTold(t *testing.T) {
	in, sb := newIntake(t, nil, 0)
	s, err := in.Save(context.Background(), thread, file("contract.docx", "this is not a zip"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Notice, "I couldn't read contract.docx: it is damaged") {
		t.Errorf("notice = %q", s.Notice)
	}
	if !strings.Contains(s.Line, "(not converted: it is damaged") {
		t.Errorf("line = %q", s.Line)
	}
	if read(t, sb, s.Path) != "this is not a zip" {
		t.Error("the original was not kept")
	}
	if _, err := sb.OpenUpload(thread, s.Path+".md"); err == nil {
		t.Error("a Markdown version was written for a damaged file")
	}
}

// TestVoice: a voice note is transcribed into the message and kept with
// its transcript; without a speech-to-text model, or when it fails or
// hears nothing, the person is told and the note is marked unheard.
func TestVoice(t *testing.T) {
	note := bus.Attachment{Name: "voice_7.ogg", MIME: "audio/ogg", Voice: true, Size: 4}
	note.Open = file("x", "OggS").Open
	tests := []struct {
		name   string
		tr     Transcriber
		want   string
		notice string
	}{
		{"heard", &ears{text: "remind me to buy milk"}, "remind me to buy milk", ""},
		{"no model", nil, "", NoTranscription},
		{"fails", &ears{err: &llm.Error{Kind: llm.KindServer, Status: 503}}, "", "I couldn't transcribe voice_7.ogg: the speech-to-text service is unavailable right now; please try again in a moment."},
		{"refused key", &ears{err: &llm.Error{Kind: llm.KindAuth, Status: 401}}, "", "I couldn't transcribe voice_7.ogg: the speech-to-text service refused the key configured for it."},
		{"silence", &ears{}, "", "I couldn't make out any words in voice_7.ogg."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, sb := newIntake(t, tt.tr, 0)
			s, err := in.Save(context.Background(), thread, note)
			if err != nil {
				t.Fatal(err)
			}
			if s.Transcript != tt.want || s.Notice != tt.notice || s.Unheard != (tt.want == "") {
				t.Errorf("saved = %+v", s)
			}
			if e, ok := tt.tr.(*ears); ok && e.got["voice_7.ogg"] != "OggS" {
				t.Errorf("the transcriber got %q", e.got)
			}
			if tt.want != "" && read(t, sb, "/mnt/user-data/uploads/voice_7.ogg.md") != tt.want+"\n" {
				t.Error("the transcript was not kept beside the recording")
			}
		})
	}
}

// TestTooLargeAndImages: a file over the limit is refused before it is
// fetched; a picture is marked as one.
func TestTooLargeAndImages(t *testing.T) {
	in, _ := newIntake(t, nil, 10)
	opened := false
	big := bus.Attachment{Name: "big.pdf", Size: 11, Open: func() (io.ReadCloser, error) { opened = true; return nil, os.ErrInvalid }}
	if _, err := in.Save(context.Background(), thread, big); err == nil || opened {
		t.Errorf("err = %v, opened = %v", err, opened)
	}
	s, err := in.Save(context.Background(), thread, file("photo_1.jpg", "\xff\xd8\xff"))
	if err != nil || !s.Image || filepath.Base(s.Path) != "photo_1.jpg" {
		t.Errorf("saved = %+v, %v", s, err)
	}
}
