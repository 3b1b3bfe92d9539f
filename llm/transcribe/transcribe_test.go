package transcribe

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/llm"
)

// transcriber returns a Transcriber for s whose backoff waits are
// recorded, not waited.
func transcriber(s *fakeopenai.Server, key string) (*Transcriber, *sleeps) {
	sl := &sleeps{}
	tr := New(Config{BaseURL: s.URL, APIKey: key, Model: "whisper-1"})
	tr.sleep = sl.sleep
	return tr, sl
}

func TestTranscribeSendsTheRecording(t *testing.T) {
	s := fakeopenai.New(t)
	s.Key = "sk-test"
	s.ScriptTranscripts("  Remind me to buy milk.\n")
	tr, sl := transcriber(s, "sk-test")
	voice := fakeopenai.VoiceNote()
	text, err := tr.Transcribe(context.Background(), "voice_77.ogg", bytes.NewReader(voice))
	if err != nil || text != "Remind me to buy milk." {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	want := []fakeopenai.AudioRequest{{Model: "whisper-1", FileName: "voice_77.ogg", Data: voice, Format: "json"}}
	if diff := cmp.Diff(want, s.AudioRequests(), cmpopts.IgnoreFields(fakeopenai.AudioRequest{}, "Header", "Time")); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if got := s.AudioRequests()[0].Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if len(sl.all()) != 0 {
		t.Errorf("waited %v", sl.all())
	}
}

// TestTranscribeOpusAsOgg: Feishu/Lark's voice notes are named .opus,
// which OpenAI refuses; they are Ogg Opus and go as .ogg.
func TestTranscribeOpusAsOgg(t *testing.T) {
	s := fakeopenai.New(t)
	s.ScriptTranscripts("hi")
	tr, _ := transcriber(s, "")
	if _, err := tr.Transcribe(context.Background(), "voice_file_v3_abc.opus", bytes.NewReader(fakeopenai.VoiceNote())); err != nil {
		t.Fatal(err)
	}
	if got := s.AudioRequests()[0].FileName; got != "voice_file_v3_abc.ogg" {
		t.Errorf("file name sent = %q", got)
	}
}

func TestTranscribeEmptyTranscript(t *testing.T) {
	s := fakeopenai.New(t)
	s.ScriptTranscripts(" \n ")
	tr, _ := transcriber(s, "")
	if text, err := tr.Transcribe(context.Background(), "v.ogg", bytes.NewReader(fakeopenai.VoiceNote())); text != "" || err != nil {
		t.Fatalf("Transcribe = %q, %v; want \"\", nil", text, err)
	}
}

func TestTranscribeRefusedKey(t *testing.T) {
	s := fakeopenai.New(t)
	s.Key = "sk-right"
	tr, sl := transcriber(s, "sk-wrong-key")
	_, err := tr.Transcribe(context.Background(), "v.ogg", bytes.NewReader(fakeopenai.VoiceNote()))
	e := wantKind(t, err, llm.KindAuth)
	if e.Status != http.StatusUnauthorized || e.ProviderMessage != "Incorrect API key provided" || strings.Contains(e.Error(), "sk-wrong-key") {
		t.Errorf("error = %+v", e)
	}
	if n := len(s.AudioRequests()); n != 0 || len(sl.all()) != 0 {
		t.Errorf("%d requests recorded past the key check, waits %v; want none (no retry)", n, sl.all())
	}
}

func TestTranscribeRetriesOnceAfterRateLimit(t *testing.T) {
	s := fakeopenai.New(t)
	s.ScriptAudio(fakeopenai.Transcription{Status: http.StatusTooManyRequests, RetryAfter: "2"}, fakeopenai.Transcription{Text: "second time lucky"})
	tr, sl := transcriber(s, "")
	voice := fakeopenai.VoiceNote()
	text, err := tr.Transcribe(context.Background(), "v.ogg", bytes.NewReader(voice))
	if err != nil || text != "second time lucky" {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	reqs := s.AudioRequests()
	if len(reqs) != 2 || !bytes.Equal(reqs[1].Data, voice) {
		t.Fatalf("%d requests; the retry must send the same bytes", len(reqs))
	}
	if diff := cmp.Diff([]time.Duration{2 * time.Second}, sl.all()); diff != "" {
		t.Errorf("waits (-want +got), Retry-After honoured:\n%s", diff)
	}
}

func TestTranscribeGivesUpAfterTwoServerErrors(t *testing.T) {
	s := fakeopenai.New(t)
	s.ScriptAudio(fakeopenai.Transcription{Status: 500}, fakeopenai.Transcription{Status: 503}, fakeopenai.Transcription{Text: "never asked"})
	tr, sl := transcriber(s, "")
	_, err := tr.Transcribe(context.Background(), "v.ogg", bytes.NewReader(fakeopenai.VoiceNote()))
	if e := wantKind(t, err, llm.KindServer); e.Status != 503 {
		t.Errorf("status = %d, want the last one, 503", e.Status)
	}
	if n := len(s.AudioRequests()); n != 2 || len(sl.all()) != 1 {
		t.Errorf("%d requests, waits %v; want 2 requests, one wait", n, sl.all())
	}
}

func TestTranscribeRetriesAConnectionReset(t *testing.T) {
	s := fakeopenai.New(t)
	s.ScriptAudio(fakeopenai.Transcription{Reset: true}, fakeopenai.Transcription{Text: "ok"})
	tr, _ := transcriber(s, "")
	if text, err := tr.Transcribe(context.Background(), "v.ogg", bytes.NewReader(fakeopenai.VoiceNote())); err != nil || text != "ok" {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	if n := len(s.AudioRequests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestTranscribeRefusesTooLargeWithoutSending(t *testing.T) {
	s := fakeopenai.New(t)
	tr, _ := transcriber(s, "")
	big := bytes.NewReader(make([]byte, MaxBytes+1))
	_, err := tr.Transcribe(context.Background(), "long.ogg", big)
	wantKind(t, err, llm.KindBadRequest)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
	if n := len(s.AudioRequests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestTranscribeCancelled(t *testing.T) {
	s := fakeopenai.New(t)
	s.ScriptAudio(fakeopenai.Transcription{Text: "too late", Delay: time.Minute})
	tr, _ := transcriber(s, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tr.Transcribe(ctx, "v.ogg", bytes.NewReader(fakeopenai.VoiceNote()))
		done <- err
	}()
	s.WaitAudioRequests(1)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Transcribe did not return after cancel")
	}
	// Already cancelled: nothing is sent.
	if _, err := tr.Transcribe(ctx, "v.ogg", bytes.NewReader(fakeopenai.VoiceNote())); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if n := len(s.AudioRequests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestTranscribeTimeout(t *testing.T) {
	s := fakeopenai.New(t)
	s.ScriptAudio(fakeopenai.Transcription{Text: "too late", Delay: time.Minute})
	tr := New(Config{BaseURL: s.URL, Timeout: 100 * time.Millisecond})
	_, err := tr.Transcribe(context.Background(), "v.ogg", bytes.NewReader(fakeopenai.VoiceNote()))
	if e := wantKind(t, err, llm.KindUnreachable); !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
}

func TestTranscribeNoKeyForOpenAI(t *testing.T) {
	tr := New(Config{})
	_, err := tr.Transcribe(context.Background(), "v.ogg", strings.NewReader("x"))
	wantKind(t, err, llm.KindNoKey)
}

func TestUploadName(t *testing.T) {
	for in, want := range map[string]string{
		"voice_1.ogg": "voice_1.ogg", "voice_k.opus": "voice_k.ogg", "A.OPUS": "A.ogg",
		"audio_message.webm": "audio_message.webm", "": "voice.ogg", "../../x.mp3": "x.mp3", `dir\y.m4a`: "y.m4a",
	} {
		if got := uploadName(in); got != want {
			t.Errorf("uploadName(%q) = %q, want %q", in, got, want)
		}
	}
}

// wantKind fails unless err is an *llm.Error of kind k, and returns it.
func wantKind(t *testing.T, err error, k llm.Kind) *llm.Error {
	t.Helper()
	e, ok := errors.AsType[*llm.Error](err)
	if !ok || e.Kind != k {
		t.Fatalf("err = %v (%T), want an *llm.Error of kind %v", err, err, k)
	}
	return e
}

// sleeps records the backoff waits instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}
