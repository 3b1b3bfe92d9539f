package fakeopenai

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

// The speech-to-text endpoint, POST /v1/audio/transcriptions, as OpenAI
// documents it: a multipart/form-data body with a "file" part (which must
// have a filename of a supported format), a "model" field, and optionally
// "response_format" (json, the default; text; srt; verbose_json; vtt),
// "language", "prompt" and "temperature". The Bearer key is checked as for
// chat. Replies are scripted with ScriptTranscripts or ScriptAudio, else
// decided by HandleAudio; requests are recorded for AudioRequests.

// voiceNote is a real OGG Opus voice note: one second of a 440 Hz tone
// (made with opusenc; 2.4 KB), for tests that need audio bytes a service
// would accept.
//
//go:embed testdata/voice.ogg
var voiceNote []byte

// VoiceNote returns a copy of a real one-second OGG Opus recording, a
// stand-in for a voice note in tests.
func VoiceNote() []byte { return slices.Clone(voiceNote) }

// MaxAudioBytes is OpenAI's limit on the uploaded file (25 MB); larger
// requests get 413.
const MaxAudioBytes = 25 << 20

// audioFormats are the file extensions OpenAI accepts, by the filename.
var audioFormats = []string{"flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm"}

// AudioRequest is a transcription request as the fake decoded it.
type AudioRequest struct {
	Model    string
	FileName string // the file part's filename
	Data     []byte // the file part's bytes
	Format   string // response_format as sent; "" when absent (json)
	Language string
	Prompt   string
	Header   http.Header
	Time     time.Time
}

// Transcription is the fake's reply to one transcription request: Text in
// the requested format, or an error response when Status is set.
type Transcription struct {
	Text     string
	Language string  // verbose_json's language; default "english"
	Duration float64 // verbose_json's duration in seconds

	// Status, when set, makes the reply an error response with this HTTP
	// status: Body if set (sent as is), else an OpenAI-style error.
	Status     int
	Body       string
	RetryAfter string // the Retry-After header of the error response
	// Reset drops the connection with a TCP reset instead of answering,
	// as a failing proxy or network does: the client sees ECONNRESET.
	Reset bool
	// Delay is waited before answering; a client disconnect ends it.
	Delay time.Duration
}

// audioState is the fake's transcription endpoint; guarded by Server.mu.
type audioState struct {
	script []Transcription
	handle func(AudioRequest) Transcription
	reqs   []AudioRequest
}

// ScriptTranscripts queues successful transcriptions, one per request.
func (s *Server) ScriptTranscripts(texts ...string) {
	for _, t := range texts {
		s.ScriptAudio(Transcription{Text: t})
	}
}

// ScriptAudio queues replies; each transcription request takes the next one.
func (s *Server) ScriptAudio(replies ...Transcription) {
	s.mu.Lock()
	s.audio.script = append(s.audio.script, replies...)
	s.mu.Unlock()
}

// HandleAudio sets a function deciding the reply to each transcription
// request once the scripted ones are used up. It may be called
// concurrently. Without script or handler a request gets a 500.
func (s *Server) HandleAudio(f func(AudioRequest) Transcription) {
	s.mu.Lock()
	s.audio.handle = f
	s.mu.Unlock()
}

// AudioRequests returns the transcription requests that passed the key
// check, refused ones included (with what could be read), in arrival order.
func (s *Server) AudioRequests() []AudioRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.audio.reqs)
}

// WaitAudioRequests blocks until at least n transcription requests have
// arrived (or the test ended) and returns them.
func (s *Server) WaitAudioRequests(n int) []AudioRequest {
	s.wait(func() bool { return len(s.audio.reqs) >= n })
	return s.AudioRequests()
}

// transcribe answers POST /v1/audio/transcriptions.
func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	if e, status := s.authorize(r); status != 0 {
		writeError(w, status, "", e)
		return
	}
	req, status, e := readAudio(w, r)
	s.mu.Lock()
	s.audio.reqs = append(s.audio.reqs, req)
	s.notify()
	s.mu.Unlock()
	if status != 0 {
		writeError(w, status, "", e)
		return
	}
	t, ok := s.nextAudio(req)
	switch {
	case !ok:
		writeError(w, http.StatusInternalServerError, "", apiError{
			Message: fmt.Sprintf("fakeopenai: no transcription scripted for %q", req.FileName), Type: "server_error"})
	case t.Delay > 0 && !s.pause(r.Context(), nil, t.Delay):
		// The client went away.
	case t.Reset:
		reset(w)
	case t.Status != 0:
		writeTurnError(w, &Request{Model: req.Model}, &Turn{Status: t.Status, Body: t.Body, RetryAfter: t.RetryAfter})
	default:
		writeTranscription(w, req.Format, &t)
	}
}

// nextAudio takes the reply for req: the next scripted one, else the handler's.
func (s *Server) nextAudio(req AudioRequest) (Transcription, bool) {
	s.mu.Lock()
	if len(s.audio.script) > 0 {
		t := s.audio.script[0]
		s.audio.script = s.audio.script[1:]
		s.mu.Unlock()
		return t, true
	}
	h := s.audio.handle
	s.mu.Unlock()
	if h == nil {
		return Transcription{}, false
	}
	return h(req), true
}

// readAudio decodes and checks the multipart body the way OpenAI does. A
// non-zero status is a refusal with e; req then holds what could be read.
func readAudio(w http.ResponseWriter, r *http.Request) (req AudioRequest, status int, e apiError) {
	req.Header, req.Time = r.Header.Clone(), time.Now()
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return req, http.StatusBadRequest, apiError{Type: "invalid_request_error",
			Message: fmt.Sprintf("Invalid Content-Type header (%s), expected multipart/form-data. (HINT: If you're using curl, you can pass -H 'Content-Type: multipart/form-data')", r.Header.Get("Content-Type"))}
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxAudioBytes+1<<20) // room for the other fields
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return req, http.StatusRequestEntityTooLarge, apiError{Type: "invalid_request_error",
				Message: fmt.Sprintf("Maximum content size limit (%d) exceeded.", MaxAudioBytes)}
		}
		return req, http.StatusBadRequest, apiError{Type: "invalid_request_error", Message: "Could not parse multipart form"}
	}
	req.Model, req.Format = r.FormValue("model"), r.FormValue("response_format")
	req.Language, req.Prompt = r.FormValue("language"), r.FormValue("prompt")
	if fhs := r.MultipartForm.File["file"]; len(fhs) > 0 {
		req.FileName = fhs[0].Filename
		req.Data = readPart(fhs[0])
	}
	if e := checkAudio(&req); e != nil {
		status := http.StatusBadRequest
		if len(req.Data) > MaxAudioBytes {
			status = http.StatusRequestEntityTooLarge
		}
		return req, status, *e
	}
	return req, 0, apiError{}
}

// readPart reads an uploaded file part; nil when it cannot be read.
func readPart(fh *multipart.FileHeader) []byte {
	f, err := fh.Open()
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	return data
}

// checkAudio refuses what OpenAI refuses, with its wording.
func checkAudio(req *AudioRequest) *apiError {
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(req.FileName)), ".")
	switch {
	case req.Data == nil:
		return invalid("file", "you must provide a file")
	case req.Model == "":
		return invalid("", "you must provide a model parameter")
	case len(req.Data) > MaxAudioBytes:
		return invalid("file", "Maximum content size limit (%d) exceeded (%d bytes read)", MaxAudioBytes, len(req.Data))
	case !slices.Contains(audioFormats, ext):
		return invalid("file", "Invalid file format. Supported formats: ['%s']", strings.Join(audioFormats, "', '"))
	case len(req.Data) == 0:
		return invalid("file", "Audio file is too short. Minimum audio length is 0.1 seconds.")
	}
	switch req.Format {
	case "", "json", "text", "srt", "verbose_json", "vtt":
		return nil
	}
	return invalid("response_format", "'%s' is not one of ['json', 'text', 'srt', 'verbose_json', 'vtt'] - 'response_format'", req.Format)
}

// writeTranscription answers with t.Text in the requested format.
func writeTranscription(w http.ResponseWriter, format string, t *Transcription) {
	h := w.Header()
	switch format {
	case "text":
		h.Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, t.Text+"\n")
	case "srt":
		h.Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "1\n00:00:00,000 --> %s\n%s\n\n", clock(t.Duration, ","), t.Text)
	case "vtt":
		h.Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "WEBVTT\n\n00:00:00.000 --> %s\n%s\n\n", clock(t.Duration, "."), t.Text)
	case "verbose_json":
		lang := t.Language
		if lang == "" {
			lang = "english"
		}
		h.Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"task": "transcribe", "language": lang,
			"duration": t.Duration, "text": t.Text, "segments": []any{}})
	default:
		h.Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"text": t.Text})
	}
}

// clock formats seconds as a subtitle timestamp, hh:mm:ss<sep>mmm.
func clock(seconds float64, sep string) string {
	d := time.Duration(seconds * float64(time.Second))
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60, sep, d.Milliseconds()%1000)
}

// reset closes the connection with a TCP RST (linger 0), so the client
// sees "connection reset by peer" rather than a clean EOF.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
