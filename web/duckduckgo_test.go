package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ddgEngine is a fake DuckDuckGo on 127.0.0.1: POST /html/ answers with
// page and status, after checking the form a browser would send.
func ddgEngine(t *testing.T, status int, page string) (*httptest.Server, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/html/" {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
			t.Errorf("content type %q", ct)
		}
		mu.Lock()
		queries = append(queries, r.PostFormValue("q"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(status)
		w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	return srv, &queries
}

func ddgSearch(t *testing.T, status int, page string, args map[string]any) (string, error) {
	t.Helper()
	srv, queries := ddgEngine(t, status, page)
	p, err := NewProvider("duckduckgo", "", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, SearchTool(p, 5), args)
	if len(*queries) != 1 || (*queries)[0] != args["query"] {
		t.Errorf("engine was asked %q", *queries)
	}
	return out, err
}

func TestDuckDuckGoResults(t *testing.T) {
	out, err := ddgSearch(t, 200, fixture(t, "ddg_results.html"), map[string]any{"query": "cgb-awxp-eur-1", "max_results": 2})
	if err != nil {
		t.Fatal(err)
	}
	want := "Results from duckduckgo for \"cgb-awxp-eur-1\":\n\n" +
		"1. Get information and compare prices of Mario Golf for Game Boy | VGDb\n" +
		"   https://vgdb.uk/mario-golf/game/48484\n" +
		"   045496730963. MPN. CGB-AWXP-EUR-1. Release Date.\n\n" +
		"2. Mario Golf - Nintendo Game Boy color / Advance GBC GBA... | eBay\n" +
		"   https://www.ebay.de/itm/Mario-Golf-Nintendo-Game-Boy-color-Advance-GBC-GBA-CGB-AWXP-EUR/264853273128?epid=167015543&hash=item3daa7c3a28:g:0U0AAOSwC-5fUT36\n" +
		"   Super mario bros deluxe game boy color game nintendo original gbc EUR-1 version. Golf. Herstellernummer: CGB-AWXP-EUR. Herausgeber: Nintendo."
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestDuckDuckGoAllResults(t *testing.T) {
	rs, err := parseDDGPage([]byte(fixture(t, "ddg_results.html")))
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, r := range rs {
		urls = append(urls, r.URL)
	}
	want := []string{
		"https://vgdb.uk/mario-golf/game/48484",
		"https://www.ebay.de/itm/Mario-Golf-Nintendo-Game-Boy-color-Advance-GBC-GBA-CGB-AWXP-EUR/264853273128?epid=167015543&hash=item3daa7c3a28:g:0U0AAOSwC-5fUT36",
		"http://passat.neostrada.pl/zabikt/GB.txt",
		"https://en.wikipedia.org/wiki/EUR.1_movement_certificate",
	}
	if strings.Join(urls, "\n") != strings.Join(want, "\n") {
		t.Errorf("urls:\n%s", strings.Join(urls, "\n"))
	}
	if s := rs[2].Snippet; !strings.Contains(s, "CGB-AW8A- 11'00 Nintendo Wario Land 3") {
		t.Errorf("entities or <b> not handled: %q", s)
	}
}

// adBlock is a sponsored row as DuckDuckGo marks it (result--ad, a
// badge--ad, a /y.js link), assembled from markers seen in real pages.
const adBlock = `<div class="result results_links results_links_deep result--ad result--ad--small">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=shop.example&amp;ad_provider=bingv7aa&amp;ad_type=txad&amp;u3=https%3A%2F%2Fshop.example%2F">SPONSORED mario carts</a></h2>
    <span class="badge--ad">Ad</span>
    <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=shop.example">Buy now.</a>
  </div>
</div>
<div class="result results_links result--ad">
  <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://shop.example/deal">SPONSORED direct</a></h2>
</div>
<div class="result results_links results_links_deep web-result ">
  <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fduckduckgo.com%2Fy.js%3Fad_domain%3Dshop.example&amp;rut=1">SPONSORED wrapped</a></h2>
</div>
`

func TestDuckDuckGoSkipsAds(t *testing.T) {
	page := strings.Replace(fixture(t, "ddg_results.html"), `<div id="links" class="results">`, `<div id="links" class="results">`+adBlock, 1)
	out, err := ddgSearch(t, 200, page, map[string]any{"query": "cgb-awxp-eur-1", "max_results": 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "SPONSORED") || strings.Contains(out, "shop.example") {
		t.Errorf("an ad came through:\n%s", out)
	}
	if !strings.Contains(out, "1. Get information and compare prices of Mario Golf") {
		t.Errorf("first organic result missing:\n%s", out)
	}
}

// emptyPage is the real page with its results replaced by the note
// DuckDuckGo shows when nothing matches.
func emptyPage(t *testing.T) string {
	page := fixture(t, "ddg_results.html")
	start := strings.Index(page, `<div id="links" class="results">`)
	end := strings.Index(page, `<div class="nav-link">`)
	return page[:start] + `<div id="links" class="results">
<div class="result results_links results_links_deep web-result "><div class="no-results">No results.</div></div>
` + page[end:]
}

func TestDuckDuckGoNoResults(t *testing.T) {
	out, err := ddgSearch(t, 200, emptyPage(t), map[string]any{"query": "zqxj captcha anomaly solver"})
	if err != nil {
		t.Fatal(err)
	}
	if out != `No results for "zqxj captcha anomaly solver".` {
		t.Errorf("got %q", out)
	}
}

func TestDuckDuckGoChangedPage(t *testing.T) {
	renamed := strings.NewReplacer(`class="result__a"`, `class="serp-title"`, `class="result results_links`, `class="serp-item results_links`).
		Replace(fixture(t, "ddg_results.html"))
	for name, page := range map[string]string{
		"classes renamed": renamed,
		"other page":      "<html><head><title>DuckDuckGo</title></head><body><p>We'll be back soon.</p></body></html>",
		"empty body":      "",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ddgSearch(t, 200, page, map[string]any{"query": "go"})
			if err == nil || !strings.Contains(err.Error(), "could not read DuckDuckGo's results page") {
				t.Errorf("got %v", err)
			}
		})
	}
}

func TestDuckDuckGoRefusal(t *testing.T) {
	anomaly := fixture(t, "ddg_anomaly.html")
	for _, c := range []struct {
		name   string
		status int
		page   string
	}{
		{"bot check as 202", http.StatusAccepted, anomaly},
		{"bot check as 200", http.StatusOK, anomaly},
		{"too many requests", http.StatusTooManyRequests, ""},
		{"forbidden", http.StatusForbidden, "Forbidden"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ddgSearch(t, c.status, c.page, map[string]any{"query": "go"})
			if !errors.Is(err, errDDGRefused) {
				t.Fatalf("got %v", err)
			}
			if !strings.Contains(err.Error(), "DuckDuckGo refused the search (rate limited or a bot check); try again later or configure tavily, brave or searxng") {
				t.Errorf("message %q", err)
			}
		})
	}
	_, err := ddgSearch(t, http.StatusBadGateway, "oops", map[string]any{"query": "go"})
	if err == nil || !strings.Contains(err.Error(), "DuckDuckGo failed (502 Bad Gateway)") {
		t.Errorf("502: %v", err)
	}
}

func TestDuckDuckGoBotCheckNeedsMarkup(t *testing.T) {
	// A results page about anomalies quotes the words, not the markup.
	page := strings.Replace(fixture(t, "ddg_results.html"), "Release Date.", "see anomaly-modal and challenge-form, anomaly.js", 1)
	if isBotCheck([]byte(page)) {
		t.Error("a results page that mentions the markers was taken for a bot check")
	}
	if !isBotCheck([]byte(fixture(t, "ddg_anomaly.html"))) {
		t.Error("the bot check page was not recognised")
	}
}

func TestUnwrapDDG(t *testing.T) {
	for href, want := range map[string]string{
		"//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2Fdoc%2F%3Fa%3D1%26b%3D2&rut=x": "https://go.dev/doc/?a=1&b=2",
		"/l/?kh=-1&uddg=https%3A%2F%2Fexample.org%2Ftwo":                               "https://example.org/two",
		"https://example.org/plain":                                                    "https://example.org/plain",
		"https://duckduckgo.com/y.js?ad_domain=x":                                      "",
		"//duckduckgo.com/l/?uddg=javascript%3Aalert(1)":                               "",
		"//duckduckgo.com/l/?rut=x":                                                    "",
		"mailto:a@example.org":                                                         "",
	} {
		got, ok := unwrapDDG(href)
		if got != want || ok != (want != "") {
			t.Errorf("unwrapDDG(%q) = %q, %v; want %q", href, got, ok, want)
		}
	}
}

// TestDuckDuckGoGuard: without a base URL override the provider reaches
// public addresses only, so pointing it at loopback fails before any
// request arrives.
func TestDuckDuckGoGuard(t *testing.T) {
	srv, queries := ddgEngine(t, 200, fixture(t, "ddg_results.html"))
	p := NewDuckDuckGo("", nil).(*duckduckgo)
	p.htmlURL = srv.URL + "/html/"
	_, err := p.Search(context.Background(), "go", 5)
	if err == nil || !strings.Contains(err.Error(), "private or local address") {
		t.Errorf("got %v", err)
	}
	if len(*queries) != 0 {
		t.Errorf("the engine on loopback was reached: %q", *queries)
	}
}

// handlerTransport answers in memory, without sockets, so that a
// synctest bubble can advance its clock.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, r)
	return w.Result(), nil
}

func TestDuckDuckGoPacing(t *testing.T) {
	page := fixture(t, "ddg_results.html")
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var starts []time.Time
		running, most := 0, 0
		engine := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			starts = append(starts, time.Now())
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(300 * time.Millisecond) // the engine takes a while to answer
			mu.Lock()
			running--
			mu.Unlock()
			w.Write([]byte(page))
		})
		p := NewDuckDuckGo("http://127.0.0.1:1", &http.Client{Transport: handlerTransport{engine}})
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if _, err := p.Search(t.Context(), "go", 5); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if most != 1 {
			t.Errorf("%d requests ran at once", most)
		}
		for i := 1; i < len(starts); i++ {
			if gap := starts[i].Sub(starts[i-1]); gap != 300*time.Millisecond+ddgInterval {
				t.Errorf("request %d started %v after the previous one", i, gap)
			}
		}
		if len(starts) != 3 {
			t.Errorf("%d requests", len(starts))
		}

		// A caller waiting for its turn gives up when its context ends.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := p.Search(ctx, "go", 5); err == nil || !strings.Contains(err.Error(), "timed out waiting for earlier DuckDuckGo searches") {
			t.Errorf("waiting search: %v", err)
		}
		ctx, cancel = context.WithCancel(t.Context())
		cancel()
		if _, err := p.(ImageSearcher).SearchImages(ctx, "go", 5); err == nil || !strings.Contains(err.Error(), "cancelled") {
			t.Errorf("cancelled image search: %v", err)
		}
	})
}

func FuzzParseDDGPage(f *testing.F) {
	f.Add(fixture(f, "ddg_results.html"))
	f.Add(fixture(f, "ddg_anomaly.html"))
	f.Add(`<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=%zz">x</a></div>`)
	f.Fuzz(func(t *testing.T, page string) {
		rs, err := parseDDGPage([]byte(page))
		if err == nil && len(rs) == 0 && !strings.Contains(page, "no-results") {
			t.Errorf("no results and no error for %q", page)
		}
		for _, r := range rs {
			if _, ok := unwrapDDG(r.URL); !ok {
				t.Errorf("result URL %q is not a page outside DuckDuckGo", r.URL)
			}
		}
	})
}
