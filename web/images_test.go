package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// vqdPage stands for DuckDuckGo's search page, which carries the token in
// its scripts (the shapes other clients parse: vqd="…" and vqd=…&).
const vqdPage = `<!DOCTYPE html><html><head><title>car at DuckDuckGo</title></head><body>
<script>DDG.page = new DDG.Pages.SERP({});vqd="4-211498720127398414658049383716402573945";</script>
<script>nrj('/d.js?q=car&t=D&l=wt-wt&s=0&dl=en&ct=US&vqd=4-211498720127398414658049383716402573945&bing_market=en-US');</script>
</body></html>`

const testVQD = "4-211498720127398414658049383716402573945"

// ddgImageEngine is a fake DuckDuckGo on 127.0.0.1 for image search: /
// hands out the token, /i.js wants it back.
func ddgImageEngine(t *testing.T, site string, jsStatus int, js string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch r.URL.Path {
		case "/":
			if q.Get("q") != "car" || q.Get("iax") != "images" || q.Get("ia") != "images" {
				t.Errorf("search page query %v", q)
			}
			w.Write([]byte(site))
		case "/i.js":
			if q.Get("vqd") != testVQD || q.Get("o") != "json" || q.Get("q") != "car" {
				t.Errorf("i.js query %v", q)
				http.Error(w, "bad vqd", http.StatusForbidden)
				return
			}
			w.WriteHeader(jsStatus)
			w.Write([]byte(js))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDuckDuckGoImages(t *testing.T) {
	srv := ddgImageEngine(t, vqdPage, 200, fixture(t, "ddg_images.json"))
	p, _ := NewProvider("duckduckgo", "", srv.URL, nil)
	out, err := run(t, ImageSearchTool(p, 5), map[string]any{"query": "car"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Images from duckduckgo for \"car\":\n\n" +
		"1. New BMW Z4 2011 Car Wallpapers | HD Wallpapers\n" +
		"   image: http://hdwallpapers.in/walls/new_bmw_z4_2011_car-wide.jpg\n" +
		"   thumbnail: https://tse2.mm.bing.net/th?id=OIP.M3565152507258cbf2f3f22ea3f4fb9adH0&pid=15.1\n" +
		"   page: http://www.hdwallpapers.in/new_bmw_z4_2011_car-wallpapers.html\n" +
		"   size: 1920×1200"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestDuckDuckGoImageErrors(t *testing.T) {
	for _, c := range []struct {
		name, site string
		status     int
		js, want   string
	}{
		{"bot check instead of the search page", fixture(t, "ddg_anomaly.html"), 200, "", errDDGRefused.Error()},
		{"no token", "<html><body>hello</body></html>", 200, "", "could not start a DuckDuckGo image search"},
		{"i.js refuses", vqdPage, http.StatusForbidden, "", errDDGRefused.Error()},
		{"i.js not JSON", vqdPage, 200, "<html>oops</html>", "could not read DuckDuckGo's image results"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ddgImageEngine(t, c.site, c.status, c.js)
			p, _ := NewProvider("duckduckgo", "", srv.URL, nil)
			_, err := run(t, ImageSearchTool(p, 5), map[string]any{"query": "car"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestSearXNGImages(t *testing.T) {
	srv := fake(t, func(r *http.Request) string {
		q := r.URL.Query()
		if r.URL.Path != "/search" || q.Get("q") != "test image" || q.Get("format") != "json" || q.Get("categories") != "images" {
			return "query " + r.URL.String()
		}
		return ""
	}, 200, fixture(t, "searxng_images.json"))
	out, err := run(t, ImageSearchTool(NewSearXNG(srv.URL, nil), 5), map[string]any{"query": "test image"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Images from searxng for \"test image\":\n\n" +
		"1. Test Image 1\n   image: https://example.com/thumb1.jpg\n   thumbnail: https://example.com/thumb1_small.jpg\n" +
		"   page: https://example.com/image1.jpg\n   size: 1920×1080\n\n" +
		"2. Test Image 2\n   image: https://example.com/thumb2.png\n   thumbnail: https://example.com/thumb2_small.png\n" +
		"   page: https://example.com/image2.png\n   size: 800×600"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestBraveImages(t *testing.T) {
	// Fields as Brave documents ImageResult: url is the page, properties
	// the image, thumbnail the preview.
	srv := fake(t, func(r *http.Request) string {
		q := r.URL.Query()
		if r.URL.Path != "/res/v1/images/search" || q.Get("q") != "red panda" || q.Get("count") != "2" || r.Header.Get("X-Subscription-Token") != "bk" {
			return "request " + r.URL.String()
		}
		return ""
	}, 200, `{"type":"images","query":{"original":"red panda"},"results":[
		{"type":"image_result","title":"Red <strong>panda</strong> in a tree","url":"https://zoo.example/panda","source":"zoo.example",
		 "thumbnail":{"src":"https://imgs.search.brave.com/t1","width":500,"height":375},
		 "properties":{"url":"https://zoo.example/panda.jpg","placeholder":"https://imgs.search.brave.com/p1","width":2000,"height":1500}},
		{"type":"image_result","title":"No size","url":"https://b.example/","thumbnail":{"src":"https://imgs.search.brave.com/t2"},
		 "properties":{"url":"https://b.example/b.png"}},
		{"type":"image_result","title":"Third","properties":{"url":"https://c.example/c.png"}}],"extra":{"might_be_offensive":false}}`)
	out, err := run(t, ImageSearchTool(NewBrave("bk", srv.URL, nil), 5), map[string]any{"query": "red panda", "max_results": 2})
	if err != nil {
		t.Fatal(err)
	}
	want := "Images from brave for \"red panda\":\n\n" +
		"1. Red panda in a tree\n   image: https://zoo.example/panda.jpg\n   thumbnail: https://imgs.search.brave.com/t1\n" +
		"   page: https://zoo.example/panda\n   size: 2000×1500\n\n" +
		"2. No size\n   image: https://b.example/b.png\n   thumbnail: https://imgs.search.brave.com/t2\n   page: https://b.example/"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestTavilyImages(t *testing.T) {
	srv := fake(t, func(r *http.Request) string {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &body) != nil || body["include_images"] != true || body["query"] != "lighthouse" {
			return "body " + string(b)
		}
		return ""
	}, 200, `{"results":[],"images":[{"url":"https://a.example/l.jpg","description":"A lighthouse at dusk."},"https://b.example/l2.jpg","data:image/png;base64,AAAA"]}`)
	out, err := run(t, ImageSearchTool(NewTavily("tk", srv.URL, nil), 5), map[string]any{"query": "lighthouse"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Images from tavily for \"lighthouse\":\n\n" +
		"1. A lighthouse at dusk.\n   image: https://a.example/l.jpg\n\n" +
		"2. (untitled)\n   image: https://b.example/l2.jpg"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestImageSearchTool(t *testing.T) {
	_, err := run(t, ImageSearchTool(&recorder{}, 5), map[string]any{"query": "x"})
	if err == nil || !strings.Contains(err.Error(), "image_search is not available with the rec search provider") {
		t.Errorf("provider without images: %v", err)
	}
	_, err = run(t, ImageSearchTool(&recorder{}, 5), map[string]any{"query": " "})
	if err == nil || !strings.Contains(err.Error(), "query must not be empty") {
		t.Errorf("empty query: %v", err)
	}
	srv := fake(t, func(*http.Request) string { return "" }, 200, `{"results":[{"title":"t","img_src":"data:image/gif;base64,R0lGOD"}]}`)
	out, err := run(t, ImageSearchTool(NewSearXNG(srv.URL, nil), 5), map[string]any{"query": "gif"})
	if err != nil || out != `No images for "gif".` {
		t.Errorf("only unusable images: %q %v", out, err)
	}
	srv = fake(t, func(*http.Request) string { return "" }, http.StatusTooManyRequests, `{}`)
	_, err = run(t, ImageSearchTool(NewSearXNG(srv.URL, nil), 5), map[string]any{"query": "gif"})
	if err == nil || !strings.Contains(err.Error(), "rate limited") {
		t.Errorf("429: %v", err)
	}
	if errors.Is(err, errDDGRefused) {
		t.Error("a SearXNG refusal names DuckDuckGo")
	}
}
