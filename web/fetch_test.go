package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deerflow/deerflow/tools"
)

const articlePage = `<!DOCTYPE html>
<html><head><title>Go Concurrency | Example Blog</title>
<script>var tracking = "SCRIPT-TEXT";</script>
<style>.x{color:red}</style></head>
<body>
<header><div class="logo">HEADER-TEXT</div></header>
<nav><a href="/home">NAV-TEXT</a></nav>
<div role="navigation">ROLE-NAV-TEXT</div>
<article>
  <h1>Go Concurrency</h1>
  <p>Goroutines are <strong>cheap</strong>; read the <a href="/docs/chan.html">channel docs</a>.</p>
  <ul><li>first point</li><li>second point</li></ul>
  <p hidden>HIDDEN-TEXT</p>
</article>
<aside>ASIDE-TEXT</aside>
<footer>FOOTER-TEXT</footer>
<noscript>NOSCRIPT-TEXT</noscript>
</body></html>`

func run(t *testing.T, tool tools.Tool, args any) (string, error) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), b)
}

func private(o FetchOptions) FetchOptions {
	o.AllowPrivate = true
	return o
}

func serve(t *testing.T, contentType, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchArticle(t *testing.T) {
	srv := serve(t, "text/html; charset=utf-8", articlePage)
	out, err := run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL + "/posts/go"})
	if err != nil {
		t.Fatal(err)
	}
	wants := []string{
		"URL: " + srv.URL + "/posts/go\n\n",
		"# Go Concurrency",
		"Goroutines are **cheap**",
		"[channel docs](" + srv.URL + "/docs/chan.html)",
		"- first point",
		"- second point",
	}
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, bad := range []string{"SCRIPT", "HEADER", "NAV-TEXT", "ROLE-NAV", "ASIDE", "FOOTER", "NOSCRIPT", "HIDDEN", "color:red"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q:\n%s", bad, out)
		}
	}
	// The title's "Go Concurrency" is already the first heading.
	if strings.Count(out, "Go Concurrency") != 1 {
		t.Errorf("title repeated:\n%s", out)
	}
}

func TestFetchTitleLine(t *testing.T) {
	page := `<html><head><title>The Page Title</title></head><body><main><h2>Section</h2><p>Body text.</p></main>
<footer>FOOTER</footer></body></html>`
	srv := serve(t, "text/html", page)
	out, err := run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "URL: "+srv.URL+"\n\n# The Page Title\n\n## Section") {
		t.Errorf("want the title as the first line:\n%s", out)
	}
	if strings.Contains(out, "FOOTER") {
		t.Errorf("footer kept:\n%s", out)
	}
}

func TestFetchBaseHref(t *testing.T) {
	page := `<html><head><base href="https://cdn.example.org/root/"></head><body><p><a href="x/y">rel</a></p></body></html>`
	srv := serve(t, "text/html", page)
	out, err := run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[rel](https://cdn.example.org/root/x/y)") {
		t.Errorf("link not resolved against <base>:\n%s", out)
	}
}

func TestFetchTruncation(t *testing.T) {
	text := strings.Repeat("é", 10000) // multi-byte: counts are characters
	srv := serve(t, "text/plain; charset=utf-8", text)
	tool := FetchTool(private(FetchOptions{MaxChars: 1000}))

	out, err := run(t, tool, map[string]any{"url": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(out, "URL: "+srv.URL+"\n\n")
	shown, note, ok := strings.Cut(body, "\n\n")
	if !ok || utf8.RuneCountInString(shown) != 1000 || !utf8.ValidString(shown) {
		t.Fatalf("want 1000 characters then a note, got %d:\n%s", utf8.RuneCountInString(shown), note)
	}
	want := "[truncated: showing the first 1000 of 10000 characters; call web_fetch with a larger max_chars to read more]"
	if note != want {
		t.Errorf("note %q, want %q", note, want)
	}

	out, err = run(t, tool, map[string]any{"url": srv.URL, "max_chars": 2500})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "showing the first 2500 of 10000 characters") {
		t.Errorf("max_chars ignored: %s", out[len(out)-150:])
	}

	// max_chars is capped at 4*MaxChars.
	out, err = run(t, tool, map[string]any{"url": srv.URL, "max_chars": 1000000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "showing the first 4000 of 10000 characters, the most web_fetch returns") {
		t.Errorf("max_chars not capped: %s", out[len(out)-150:])
	}

}

func TestFetchPlainTextAndJSON(t *testing.T) {
	for _, ct := range []string{"text/plain", "text/markdown; charset=utf-8", "application/json", "text/csv"} {
		body := "line one\r\n<b>not html</b>\r\n"
		srv := serve(t, ct, body)
		out, err := run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL})
		if err != nil {
			t.Fatalf("%s: %v", ct, err)
		}
		if out != "URL: "+srv.URL+"\n\nline one\n<b>not html</b>" {
			t.Errorf("%s: got %q", ct, out)
		}
	}
}

func TestFetchCharset(t *testing.T) {
	srv := serve(t, "text/plain; charset=iso-8859-1", "caf\xe9 \x80")
	out, err := run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "café €") {
		t.Errorf("latin-1 not decoded: %q", out)
	}
	srv = serve(t, "text/html", `<html><head><meta charset="windows-1252"><title>t</title></head><body><p>na`+"\xef"+`ve</p></body></html>`)
	out, err = run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "naïve") {
		t.Errorf("meta charset ignored: %q", out)
	}
	srv = serve(t, "text/plain", "ok \xff end")
	out, _ = run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL})
	if !utf8.ValidString(out) || !strings.Contains(out, "ok \uFFFD end") {
		t.Errorf("invalid UTF-8 not replaced: %q", out)
	}
}

func TestFetchUnsupportedType(t *testing.T) {
	srv := serve(t, "application/pdf", "%PDF-1.7 binary")
	_, err := run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL + "/a.pdf"})
	if err == nil || !strings.Contains(err.Error(), "application/pdf is not supported") {
		t.Fatalf("want the PDF refused, got %v", err)
	}
	// No Content-Type: the body is sniffed.
	srv = serve(t, "", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	_, err = run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL})
	if err == nil || !strings.Contains(err.Error(), "image/png is not supported") {
		t.Fatalf("want the PNG refused, got %v", err)
	}
}

func TestFetchHTTPError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL + "/missing"})
	if err == nil || !strings.Contains(err.Error(), "the server answered 404 Not Found") {
		t.Fatalf("got %v", err)
	}
}

func TestFetchTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	_, err := run(t, FetchTool(private(FetchOptions{Timeout: 100 * time.Millisecond})), map[string]any{"url": srv.URL})
	if err == nil || !strings.Contains(err.Error(), "timed out after 100ms") {
		t.Fatalf("got %v", err)
	}
}

func TestFetchMaxBytes(t *testing.T) {
	srv := serve(t, "text/plain", strings.Repeat("a", 5000))
	out, err := run(t, FetchTool(private(FetchOptions{MaxBytes: 100})), map[string]any{"url": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, strings.Repeat("a", 100)+"\n\n[the page is larger than 100 bytes") || strings.Contains(out, strings.Repeat("a", 101)) {
		t.Errorf("body not limited: %q", out)
	}
}

func TestFetchRefusesPrivate(t *testing.T) {
	srv := serve(t, "text/plain", "secret")
	tool := FetchTool(FetchOptions{})
	_, err := run(t, tool, map[string]any{"url": srv.URL + "/"})
	want := "refusing to fetch " + srv.URL + "/: it resolves to a private or local address (127.0.0.1)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	// A host name is checked at the address it resolves to.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	_, err = run(t, tool, map[string]any{"url": "http://localhost:" + port + "/x"})
	if err == nil || !strings.Contains(err.Error(), "refusing to fetch http://localhost:"+port+"/x: it resolves to a private or local address") {
		t.Fatalf("got %v", err)
	}
}

// A redirect to a private address is refused. The transport sends every
// request to the test server, so the first host looks public.
func TestFetchRefusesRedirectToPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "public.example" {
			http.Redirect(w, r, "http://127.0.0.1:9/admin", http.StatusFound)
			return
		}
		fmt.Fprint(w, "secret")
	}))
	defer srv.Close()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	defer tr.CloseIdleConnections()
	_, err := run(t, FetchTool(FetchOptions{Transport: tr}), map[string]any{"url": "http://public.example/"})
	want := "refusing to fetch http://127.0.0.1:9/admin: it resolves to a private or local address (127.0.0.1)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestFetchRedirectLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
			return
		}
		fmt.Fprint(w, "arrived")
	}))
	defer srv.Close()
	tool := FetchTool(private(FetchOptions{}))

	out, err := run(t, tool, map[string]any{"url": srv.URL + "/r/5"})
	if err != nil || out != "URL: "+srv.URL+"/r/0\n\narrived" {
		t.Fatalf("5 redirects: %q, %v", out, err)
	}
	_, err = run(t, tool, map[string]any{"url": srv.URL + "/r/6"})
	if err == nil || err.Error() != "stopped fetching "+srv.URL+"/r/6: it redirected more than 5 times" {
		t.Fatalf("6 redirects: %v", err)
	}
}

func TestFetchRedirectToOtherScheme(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://files.example/x", http.StatusFound)
	}))
	defer srv.Close()
	_, err := run(t, FetchTool(private(FetchOptions{})), map[string]any{"url": srv.URL})
	if err == nil || !strings.Contains(err.Error(), "only http and https URLs can be fetched, not ftp") {
		t.Fatalf("got %v", err)
	}
}

func TestFetchBadArguments(t *testing.T) {
	tool := FetchTool(FetchOptions{})
	for _, args := range []map[string]any{
		{},
		{"url": ""},
		{"url": "ftp://example.com/"},
		{"url": "http://user:pass@example.com/"},
		{"url": "example.com/page"},
		{"url": "http://exa mple.com/"},
	} {
		_, err := run(t, tool, args)
		if !tools.IsArgError(err) {
			t.Errorf("%v: want an ArgError, got %v", args, err)
		}
	}
	if s := tool.Spec(); s.Name != "web_fetch" || !strings.Contains(string(s.Parameters), `"required":["url"]`) {
		t.Errorf("spec: %s %s", s.Name, s.Parameters)
	}
}

func TestFetchContentRoot(t *testing.T) {
	long := strings.Repeat("Main body sentence. ", 40)
	cases := []struct {
		page      string
		want, not []string
	}{
		{ // a tiny <article> card does not win over <main>
			`<body><div>OUTSIDE</div><main><p>` + long + `</p><article><p>card</p></article></main></body>`,
			[]string{"Main body sentence.", "card"}, []string{"OUTSIDE"},
		},
		{ // several articles are all kept
			`<body><div>` + strings.Repeat("filler ", 5) + `</div><article><h2>One</h2><p>` + long + `</p></article><article><h2>Two</h2><p>` + long + `</p></article></body>`,
			[]string{"## One", "## Two"}, []string{"filler"},
		},
		{ // no article or main: the body
			`<body><nav>NAV</nav><p>just a paragraph</p></body>`,
			[]string{"just a paragraph"}, []string{"NAV"},
		},
	}
	for i, c := range cases {
		srv := serve(t, "text/html", "<html>"+c.page+"</html>")
		out, err := run(t, FetchTool(private(FetchOptions{MaxChars: 10000})), map[string]any{"url": srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("case %d lacks %q:\n%s", i, w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("case %d holds %q:\n%s", i, n, out)
			}
		}
	}
}

// A page read is noted as a source under the URL the model asked for;
// failed fetches are not.
func TestFetchNotesSources(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/post":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, articlePage)
		case "/notes.md":
			w.Header().Set("Content-Type", "text/markdown")
			fmt.Fprint(w, "Intro.\n\n```sh\n# not a title\n```\n\n# Release Notes\n\nText.")
		case "/plain":
			fmt.Fprint(w, "just text")
		case "/old":
			http.Redirect(w, r, "/post", http.StatusMovedPermanently)
		case "/empty":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body></body></html>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	var got tools.Sources
	ctx := tools.WithSources(context.Background(), &got)
	fetch := func(tool tools.Tool, url string) error {
		b, _ := json.Marshal(map[string]any{"url": url})
		_, err := tool.Run(ctx, b)
		return err
	}
	tool := FetchTool(private(FetchOptions{}))
	for _, u := range []string{" " + srv.URL + "/post ", srv.URL + "/notes.md", srv.URL + "/plain", srv.URL + "/old"} {
		if err := fetch(tool, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	for _, u := range []string{srv.URL + "/missing", srv.URL + "/empty", "ftp://example.com/", "not a url"} {
		fetch(tool, u)
	}
	if err := fetch(FetchTool(FetchOptions{}), srv.URL+"/plain?blocked"); err == nil {
		t.Fatal("a private address was fetched")
	}

	want := []tools.Source{
		{URL: srv.URL + "/post", Title: "Go Concurrency | Example Blog"},
		{URL: srv.URL + "/notes.md", Title: "Release Notes"},
		{URL: srv.URL + "/plain"},
		{URL: srv.URL + "/old", Title: "Go Concurrency | Example Blog"},
	}
	if l := got.List(); !slices.Equal(l, want) {
		t.Errorf("sources:\n got %v\nwant %v", l, want)
	}
}

func TestClipTitle(t *testing.T) {
	if got := clipTitle("Short"); got != "Short" {
		t.Errorf("clipTitle(Short) = %q", got)
	}
	got := clipTitle(strings.Repeat("é", 500))
	if n := utf8.RuneCountInString(got); n != maxTitle || !strings.HasSuffix(got, "…") {
		t.Errorf("clipped to %d characters: %q", n, got)
	}
}
