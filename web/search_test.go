package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/tools"
)

// fake serves canned JSON after check has looked at the request; a
// failed check answers 400 with the reason.
func fake(t *testing.T, check func(r *http.Request) string, status int, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := check(r); msg != "" {
			t.Errorf("bad request: %s", msg)
			http.Error(w, msg, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTavily(t *testing.T) {
	srv := fake(t, func(r *http.Request) string {
		if r.Method != http.MethodPost || r.URL.Path != "/search" {
			return "method/path " + r.Method + " " + r.URL.Path
		}
		if got := r.Header.Get("Authorization"); got != "Bearer tv-key" {
			return "authorization " + got
		}
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			return "body " + string(b)
		}
		if body["query"] != "golang generics" || body["max_results"] != float64(3) || body["search_depth"] != "basic" || len(body) != 3 {
			return "body " + string(b)
		}
		return ""
	}, 200, `{"results":[{"title":"Generics tutorial","url":"https://go.dev/doc/tutorial/generics","content":"An introduction\nto generics."},
		{"title":"","url":"https://example.com/x","content":""}]}`)

	out, err := run(t, SearchTool(NewTavily("tv-key", srv.URL+"/", nil), 5), map[string]any{"query": "golang generics", "max_results": 3})
	if err != nil {
		t.Fatal(err)
	}
	want := "Results from tavily for \"golang generics\":\n\n" +
		"1. Generics tutorial\n   https://go.dev/doc/tutorial/generics\n   An introduction to generics.\n\n" +
		"2. https://example.com/x\n   https://example.com/x"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestBrave(t *testing.T) {
	srv := fake(t, func(r *http.Request) string {
		q := r.URL.Query()
		switch {
		case r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search":
			return "method/path " + r.Method + " " + r.URL.Path
		case q.Get("q") != "rust & go" || q.Get("count") != "5" || len(q) != 2:
			return "query " + r.URL.RawQuery
		case r.Header.Get("X-Subscription-Token") != "br-key":
			return "token " + r.Header.Get("X-Subscription-Token")
		case r.Header.Get("Accept") != "application/json":
			return "accept " + r.Header.Get("Accept")
		}
		return ""
	}, 200, `{"web":{"results":[{"title":"<strong>Rust</strong> vs Go","url":"https://a.example/1",
		"description":"Compare <strong>Rust</strong> &amp; <strong>Go</strong> &#39;fairly&#39;."}]}}`)

	out, err := run(t, SearchTool(NewBrave("br-key", srv.URL, srv.Client()), 0), map[string]any{"query": "rust & go"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Results from brave for \"rust & go\":\n\n1. Rust vs Go\n   https://a.example/1\n   Compare Rust & Go 'fairly'."
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestSearXNG(t *testing.T) {
	var results []string
	for i := 1; i <= 12; i++ {
		results = append(results, fmt.Sprintf(`{"title":"R%d","url":"https://s.example/%d","content":"%s"}`, i, i, strings.Repeat("x", 400)))
	}
	srv := fake(t, func(r *http.Request) string {
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/searx/search" || q.Get("q") != "weather" || q.Get("format") != "json" {
			return "request " + r.Method + " " + r.URL.String()
		}
		return ""
	}, 200, `{"results":[`+strings.Join(results, ",")+`]}`)

	out, err := run(t, SearchTool(NewSearXNG(srv.URL+"/searx", nil), 2), map[string]any{"query": "weather"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2. R2\n   https://s.example/2\n   "+strings.Repeat("x", 299)+"…") || strings.Contains(out, "3. R3") {
		t.Errorf("want two results with clipped snippets:\n%s", out)
	}
}

func TestSearchNoResults(t *testing.T) {
	srv := fake(t, func(*http.Request) string { return "" }, 200, `{"results":[]}`)
	out, err := run(t, SearchTool(NewSearXNG(srv.URL, nil), 5), map[string]any{"query": "zzqx"})
	if err != nil || out != `No results for "zzqx".` {
		t.Fatalf("got %q, %v", out, err)
	}
}

func TestSearchErrors(t *testing.T) {
	cases := []struct {
		status int
		want   string
	}{
		{401, "the search provider refused the API key"},
		{403, "the search provider refused the API key"},
		{429, "rate limited by the search provider; try again later"},
		{500, "the search provider failed (500)"},
		{502, "the search provider failed (502)"},
		{422, "the search provider rejected the request (422 Unprocessable Entity): {\"error\":\"bad\"}"},
	}
	for _, c := range cases {
		srv := fake(t, func(*http.Request) string { return "" }, c.status, `{"error":"bad"}`)
		for _, p := range []Provider{NewTavily("k", srv.URL, nil), NewBrave("k", srv.URL, nil)} {
			_, err := p.Search(context.Background(), "q", 5)
			if err == nil || err.Error() != c.want {
				t.Errorf("%s %d: got %v, want %q", p.Name(), c.status, err, c.want)
			}
		}
	}
	srv := fake(t, func(*http.Request) string { return "" }, 403, `forbidden`)
	_, err := NewSearXNG(srv.URL, nil).Search(context.Background(), "q", 5)
	if err == nil || !strings.Contains(err.Error(), "json format") {
		t.Errorf("searxng 403: %v", err)
	}
	srv = fake(t, func(*http.Request) string { return "" }, 200, `<html>not json</html>`)
	_, err = NewBrave("k", srv.URL, nil).Search(context.Background(), "q", 5)
	if err == nil || !strings.Contains(err.Error(), "not the expected JSON") {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestSearchTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	_, err := NewTavily("k", srv.URL, &http.Client{Timeout: 100 * time.Millisecond}).Search(context.Background(), "q", 5)
	if err == nil || err.Error() != "the search provider (tavily) did not answer within 100ms" {
		t.Fatalf("got %v", err)
	}
}

func TestNewProvider(t *testing.T) {
	for _, c := range []struct{ name, key, base, want string }{
		{"tavily", "", "", "needs an API key"},
		{"brave", " ", "", "needs an API key"},
		{"searxng", "", "", "needs the URL of a SearXNG instance"},
		{"searxng", "", "ftp://x", "not an http or https URL"},
		{"google", "k", "", `unknown search provider "google"`},
		{"duckduckgo", "", "ftp://x", "not an http or https URL"},
	} {
		_, err := NewProvider(c.name, c.key, c.base, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v", c, err)
		}
	}
	for name, want := range map[string]string{"tavily": "tavily", " Brave ": "brave", "SEARXNG": "searxng", "DuckDuckGo": "duckduckgo", "": "duckduckgo"} {
		p, err := NewProvider(name, "key", "http://search.example", nil)
		if err != nil || p.Name() != want {
			t.Errorf("%s: %v %v", name, p, err)
		}
	}
	p, _ := NewProvider("tavily", "k", "", nil)
	if p.(*tavily).base != TavilyURL {
		t.Errorf("tavily default base %q", p.(*tavily).base)
	}
	p, _ = NewProvider("brave", "k", "", nil)
	if p.(*brave).base != BraveURL {
		t.Errorf("brave default base %q", p.(*brave).base)
	}
	p, _ = NewProvider("", "", "", nil)
	if d := p.(*duckduckgo); d.htmlURL != DuckDuckGoHTMLURL || d.siteURL != DuckDuckGoURL {
		t.Errorf("duckduckgo default addresses %q %q", d.htmlURL, d.siteURL)
	}
	p, _ = NewProvider("duckduckgo", "", "http://127.0.0.1:8080/", nil)
	if d := p.(*duckduckgo); d.htmlURL != "http://127.0.0.1:8080/html/" || d.siteURL != "http://127.0.0.1:8080" {
		t.Errorf("duckduckgo overridden addresses %q %q", d.htmlURL, d.siteURL)
	}
}

// recorder is a Provider remembering the max it was asked for.
type recorder struct{ max int }

func (*recorder) Name() string { return "rec" }
func (r *recorder) Search(_ context.Context, q string, max int) ([]Result, error) {
	r.max = max
	var rs []Result
	for i := 0; i < 15; i++ { // more than asked: the tool trims
		rs = append(rs, Result{Title: "t", URL: fmt.Sprintf("https://r.example/%d", i)})
	}
	return rs, nil
}

func TestSearchToolMaxResults(t *testing.T) {
	for _, c := range []struct {
		def  int
		args map[string]any
		want int
	}{
		{0, map[string]any{"query": "q"}, 5},
		{7, map[string]any{"query": "q"}, 7},
		{50, map[string]any{"query": "q"}, 10},
		{5, map[string]any{"query": "q", "max_results": 1}, 1},
		{5, map[string]any{"query": "q", "max_results": 10}, 10},
		{5, map[string]any{"query": "q", "max_results": 11}, 10},
		{5, map[string]any{"query": "q", "max_results": 0}, 5},
		{5, map[string]any{"query": "q", "max_results": -3}, 5},
	} {
		rec := &recorder{}
		out, err := run(t, SearchTool(rec, c.def), c.args)
		if err != nil {
			t.Fatal(err)
		}
		if rec.max != c.want || strings.Count(out, "https://r.example/") != c.want {
			t.Errorf("default %d, args %v: asked for %d, listed %d; want %d", c.def, c.args, rec.max, strings.Count(out, "https://r.example/"), c.want)
		}
	}
	tool := SearchTool(&recorder{}, 5)
	for _, args := range []map[string]any{{}, {"query": "  "}, {"query": "q", "max_results": "three"}} {
		if _, err := run(t, tool, args); !tools.IsArgError(err) {
			t.Errorf("%v: want an ArgError, got %v", args, err)
		}
	}
	if tool.Spec().Name != "web_search" {
		t.Errorf("name %q", tool.Spec().Name)
	}
}
