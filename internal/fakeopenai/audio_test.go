package fakeopenai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// goOpenAI is the real go-openai client pointed at s.
func goOpenAI(s *Server, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.URL
	return openai.NewClientWithConfig(cfg)
}

// TestTranscriptionFormats drives the endpoint with go-openai in every
// format it decodes, and checks what arrived.
func TestTranscriptionFormats(t *testing.T) {
	s := New(t)
	s.Key = "sk-a"
	s.HandleAudio(func(r AudioRequest) Transcription { return Transcription{Text: "hello there", Duration: 1.5} })
	c := goOpenAI(s, "sk-a")
	voice := VoiceNote()
	for _, f := range []openai.AudioResponseFormat{"", openai.AudioResponseFormatJSON, openai.AudioResponseFormatText,
		openai.AudioResponseFormatVerboseJSON, openai.AudioResponseFormatSRT, openai.AudioResponseFormatVTT} {
		resp, err := c.CreateTranscription(context.Background(), openai.AudioRequest{
			Model: openai.Whisper1, FilePath: "voice_1.ogg", Reader: bytes.NewReader(voice), Format: f, Language: "en"})
		if err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		switch f {
		case openai.AudioResponseFormatText:
			if resp.Text != "hello there\n" {
				t.Errorf("text: %q", resp.Text)
			}
		case openai.AudioResponseFormatSRT, openai.AudioResponseFormatVTT:
			if !strings.Contains(resp.Text, "--> 00:00:01") || !strings.Contains(resp.Text, "hello there") {
				t.Errorf("%s: %q", f, resp.Text)
			}
		case openai.AudioResponseFormatVerboseJSON:
			if resp.Text != "hello there" || resp.Task != "transcribe" || resp.Language != "english" || resp.Duration != 1.5 {
				t.Errorf("verbose_json: %+v", resp)
			}
		default:
			if resp.Text != "hello there" {
				t.Errorf("%q: %+v", f, resp)
			}
		}
	}
	reqs := s.AudioRequests()
	if len(reqs) != 6 || reqs[0].Format != "" || reqs[3].Format != "verbose_json" {
		t.Fatalf("requests: %d %+v", len(reqs), reqs)
	}
	for _, r := range reqs {
		if r.Model != "whisper-1" || r.FileName != "voice_1.ogg" || !bytes.Equal(r.Data, voice) || r.Language != "en" {
			t.Errorf("request = %+v", r)
		}
	}
}

// TestTranscriptionScriptAndErrors: scripted replies in order, the
// OpenAI error shape through go-openai, a reset connection, no script.
func TestTranscriptionScriptAndErrors(t *testing.T) {
	s := New(t)
	s.ScriptAudio(Transcription{Status: 429, RetryAfter: "3"}, Transcription{Reset: true})
	s.ScriptTranscripts("one")
	c := goOpenAI(s, "")
	call := func() (openai.AudioResponse, error) {
		return c.CreateTranscription(context.Background(), openai.AudioRequest{Model: "m", FilePath: "a.mp3", Reader: strings.NewReader("ID3 data")})
	}
	_, err := call()
	var ae *openai.APIError
	if !errors.As(err, &ae) || ae.HTTPStatusCode != 429 || ae.Code != "rate_limit_exceeded" {
		t.Errorf("429: %v", err)
	}
	if _, err = call(); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("reset: %v", err)
	}
	if resp, err := call(); err != nil || resp.Text != "one" {
		t.Errorf("scripted: %+v %v", resp, err)
	}
	if _, err = call(); !errors.As(err, &ae) || ae.HTTPStatusCode != 500 || !strings.Contains(ae.Message, "no transcription scripted") {
		t.Errorf("unscripted: %v", err)
	}
}

// upload posts a multipart body built by fill to the endpoint.
func upload(t *testing.T, s *Server, key string, fill func(w *multipart.Writer)) (int, string) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	fill(w)
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/audio/transcriptions", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func filePart(name string, data []byte) func(w *multipart.Writer) {
	return func(w *multipart.Writer) {
		p, _ := w.CreateFormFile("file", name)
		p.Write(data)
	}
}

// TestTranscriptionRefusals: what OpenAI refuses, with its error shape.
func TestTranscriptionRefusals(t *testing.T) {
	s := New(t)
	s.Key = "sk-a"
	s.ScriptTranscripts("never")
	voice := VoiceNote()
	tests := []struct {
		name, key string
		fill      func(w *multipart.Writer)
		status    int
		want      string
	}{
		{"no key", "", filePart("v.ogg", voice), 401, `"message":"You didn't provide an API key.`},
		{"wrong key", "sk-b", filePart("v.ogg", voice), 401, `"code":"invalid_api_key"`},
		{"no model", "sk-a", filePart("v.ogg", voice), 400,
			`{"error":{"message":"you must provide a model parameter","type":"invalid_request_error","param":null,"code":null}}`},
		{"no file", "sk-a", func(w *multipart.Writer) { w.WriteField("model", "whisper-1") }, 400, `"param":"file"`},
		{"file as a plain field", "sk-a", func(w *multipart.Writer) { w.WriteField("model", "m"); w.WriteField("file", "x") }, 400,
			`"message":"you must provide a file"`},
		{"opus name", "sk-a", func(w *multipart.Writer) { w.WriteField("model", "m"); filePart("v.opus", voice)(w) }, 400,
			`Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']`},
		{"bad format", "sk-a", func(w *multipart.Writer) {
			w.WriteField("model", "m")
			w.WriteField("response_format", "xml")
			filePart("v.ogg", voice)(w)
		}, 400, `"param":"response_format"`},
		{"too large", "sk-a", func(w *multipart.Writer) {
			w.WriteField("model", "m")
			filePart("v.ogg", make([]byte, MaxAudioBytes+1))(w)
		}, 413,
			`Maximum content size limit (26214400) exceeded`},
	}
	for _, tt := range tests {
		status, body := upload(t, s, tt.key, tt.fill)
		if status != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s; want %d with %s", tt.name, status, body, tt.status, tt.want)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/audio/transcriptions", strings.NewReader(`{"model":"m"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("JSON body: %v %v", resp, err)
	}
	resp.Body.Close()
	if n := len(s.AudioRequests()); n != len(tests)-2+1 { // all but the key failures
		t.Errorf("%d requests recorded", n)
	}
	if status, body := upload(t, s, "sk-a", func(w *multipart.Writer) { w.WriteField("model", "m"); filePart("v.ogg", voice)(w) }); status != 200 || body != `{"text":"never"}`+"\n" {
		t.Errorf("valid: %d %s", status, body)
	}
}
