package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// page serves an article between navigation, and a SearXNG-style search.
func webServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/article":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>Ferries</title></head><body><nav>Home | About | NAVTEXT</nav>
<article><h1>Electric ferries</h1><p>Norway runs more than 80 electric ferries.</p><a href="/more">more</a></article>
<footer>FOOTTEXT</footer><script>var SCRIPTTEXT=1</script></body></html>`)
		case "/search":
			if r.URL.Query().Get("format") != "json" {
				http.Error(w, "format", http.StatusForbidden)
				return
			}
			fmt.Fprintf(w, `{"results":[{"title":"Ferry facts","url":"https://example.org/ferries","content":"About %s."}]}`, r.URL.Query().Get("q"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConsoleWebTools(t *testing.T) {
	srv := webServer(t)
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "user" && strings.HasPrefix(last.Content, "fetch"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "web_fetch", Arguments: `{"url":"` + srv.URL + `/article"}`}}}
		case last.Role == "user" && strings.HasPrefix(last.Content, "search"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "web_search", Arguments: `{"query":"electric ferries"}`}}}
		}
		return fakeopenai.Turn{Text: "done"}
	})
	run := func(private bool, say string) (fakeopenai.Request, []string) {
		cfg := testConfig(t, model, t.TempDir())
		cfg.Tools.WebFetch.AllowPrivateAddresses = private
		cfg.Tools.WebSearch = config.WebSearch{Provider: "searxng", URL: srv.URL, MaxResults: 5}
		s := startChat(t, cfg)
		s.say(say)
		s.screen.waitFor(t, "done", 1)
		s.close()
		reqs := model.Requests()
		return reqs[len(reqs)-1], reqs[len(reqs)-2].ToolNames()
	}

	req, offered := run(true, "fetch the article")
	if !slices.Contains(offered, "web_fetch") || !slices.Contains(offered, "web_search") {
		t.Errorf("offered %v", offered)
	}
	got := req.Last().Content
	for _, want := range []string{"Electric ferries", "more than 80 electric ferries", srv.URL + "/more"} {
		if !strings.Contains(got, want) {
			t.Errorf("web_fetch result lacks %q:\n%s", want, got)
		}
	}
	for _, junk := range []string{"NAVTEXT", "FOOTTEXT", "SCRIPTTEXT"} {
		if strings.Contains(got, junk) {
			t.Errorf("web_fetch kept %s:\n%s", junk, got)
		}
	}

	req, _ = run(false, "fetch the article")
	if got := req.Last().Content; !strings.Contains(got, "private or local address") {
		t.Errorf("a loopback fetch was not refused: %q", got)
	}

	req, _ = run(false, "search for ferries")
	if got := req.Last().Content; !strings.Contains(got, "Ferry facts") || !strings.Contains(got, "https://example.org/ferries") || !strings.Contains(got, "About electric ferries.") {
		t.Errorf("web_search result = %q", got)
	}
}

// TestWebSearchByDefault: with no key, web_search and image_search use
// DuckDuckGo; provider none takes both away and keeps web_fetch.
func TestWebSearchByDefault(t *testing.T) {
	for _, provider := range []string{"duckduckgo", ""} {
		model := fakeopenai.New(t)
		model.Script(fakeopenai.Turn{Text: "ok"})
		cfg := testConfig(t, model, t.TempDir())
		if cfg.Tools.WebSearch.Provider != "duckduckgo" {
			t.Fatalf("the default provider is %q", cfg.Tools.WebSearch.Provider)
		}
		cfg.Tools.WebSearch.Provider = provider // "" is what none becomes
		s := startChat(t, cfg)
		s.say("hi")
		s.screen.waitFor(t, "ok", 1)
		s.close()
		names := model.Requests()[0].ToolNames()
		on := provider != ""
		if slices.Contains(names, "web_search") != on || slices.Contains(names, "image_search") != on || !slices.Contains(names, "web_fetch") {
			t.Errorf("provider %q: offered %v", provider, names)
		}
	}
}
