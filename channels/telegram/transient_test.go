package telegram

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBufferedBodies: a body of unknown length (the client library's form,
// written through a pipe) reaches the server whole: a small one in one
// piece with its length, a large upload past bufferedBody streamed after
// the part read ahead.
func TestBufferedBodies(t *testing.T) {
	type got struct {
		length int64
		body   []byte
	}
	seen := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen <- got{r.ContentLength, b}
		io.WriteString(w, `{"ok":true,"result":true}`)
	}))
	defer srv.Close()
	hc := serverErrors(srv.Client())
	for _, size := range []int{0, 37, bufferedBody - 1, bufferedBody, 3*bufferedBody + 5} {
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		pr, pw := io.Pipe()
		go func() {
			for rest := want; len(rest) > 0; rest = rest[min(len(rest), 1000):] {
				pw.Write(rest[:min(len(rest), 1000)])
			}
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/botT/sendMessage", pr)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		resp.Body.Close()
		g := <-seen
		if !bytes.Equal(g.body, want) {
			t.Errorf("%d bytes: the server got %d different bytes", size, len(g.body))
		}
		if size < bufferedBody && g.length != int64(size) {
			t.Errorf("%d bytes: sent with length %d; want the body's length", size, g.length)
		}
	}
	if _, err := hc.Post(srv.URL, "text/plain", strings.NewReader("known length")); err != nil {
		t.Fatal(err)
	}
	if g := <-seen; string(g.body) != "known length" {
		t.Errorf("a body of known length arrived as %q", g.body)
	}
}
