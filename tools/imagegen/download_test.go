package imagegen

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/event"
)

type fakeOutputs struct{}

func (fakeOutputs) SaveOutput(string, string, []byte) (event.File, error) { return event.File{}, nil }

// answerURL answers with a link instead of b64_json, as some compatible
// services do whatever response_format says.
func answerURL(link string) func(http.ResponseWriter, *http.Request) {
	return answerJSON(200, map[string]any{"created": 1, "data": []map[string]string{{"url": link}}})
}

func TestURLAnswers(t *testing.T) {
	img := testPNG(t, 6, 6)
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/img/1.png" {
			http.NotFound(w, r)
			return
		}
		w.Write(img)
	}))
	defer cdn.Close()
	for _, tc := range []struct {
		name, link string
		public     bool // the link's server counts as public (loopback allowed)
		want       string
	}{
		{"loopback refused", cdn.URL + "/img/1.png", false, "a link to a private or local address, which generate_image does not follow"},
		{"private literal refused", "http://10.0.0.5/img/1.png", false, "a link to a private or local address"},
		{"other scheme", "file:///etc/passwd", true, "could not be downloaded"},
		{"credentials", strings.Replace(cdn.URL, "http://", "http://u:p@", 1) + "/img/1.png", true, "could not be downloaded"},
		{"missing", cdn.URL + "/img/2.png", true, "could not be downloaded"},
		{"followed when public", cdn.URL + "/img/1.png", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, config.ImageGeneration{Model: "some-compatible-model"}, answerURL(tc.link))
			if tc.public {
				r.gen.fetch = cdn.Client()
			}
			out, err := r.call(t, map[string]any{"prompt": "a cat", "filename": "cat"})
			switch {
			case tc.want == "" && (err != nil || !strings.Contains(out, "/mnt/user-data/outputs/cat.png (6x6 PNG")):
				t.Fatalf("got %q, %v", out, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if n := len(r.fake.requests()); n != 1 {
				t.Errorf("%d requests to the service, want 1 (a link is not retried)", n)
			}
		})
	}
}
