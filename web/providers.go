package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/internal/lazyre"
)

// Public API addresses of the providers.
const (
	TavilyURL = "https://api.tavily.com"
	BraveURL  = "https://api.search.brave.com"
)

func baseOr(baseURL, def string) string {
	if strings.TrimSpace(baseURL) == "" {
		return def
	}
	return strings.TrimRight(strings.TrimSpace(baseURL), "/")
}

// tavily is https://tavily.com.
type tavily struct {
	key, base string
	client    *http.Client
}

// NewTavily returns the Tavily provider. baseURL "" means TavilyURL.
func NewTavily(apiKey, baseURL string, client *http.Client) Provider {
	return &tavily{key: apiKey, base: baseOr(baseURL, TavilyURL), client: client}
}

func (*tavily) Name() string { return "tavily" }

func (t *tavily) Search(ctx context.Context, query string, max int) ([]Result, error) {
	var out struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	call := apiCall{
		provider: t.Name(),
		client:   t.client,
		method:   http.MethodPost,
		url:      t.base + "/search",
		header:   map[string]string{"Authorization": "Bearer " + t.key},
		body: map[string]any{
			"query":        query,
			"max_results":  clampCount(max),
			"search_depth": "basic",
		},
	}
	if err := call.do(ctx, &out); err != nil {
		return nil, err
	}
	rs := make([]Result, 0, len(out.Results))
	for _, r := range out.Results {
		rs = append(rs, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return limit(rs, max), nil
}

// brave is the Brave Search API.
type brave struct {
	key, base string
	client    *http.Client
}

// NewBrave returns the Brave Search provider. baseURL "" means BraveURL.
func NewBrave(apiKey, baseURL string, client *http.Client) Provider {
	return &brave{key: apiKey, base: baseOr(baseURL, BraveURL), client: client}
}

func (*brave) Name() string { return "brave" }

func (b *brave) Search(ctx context.Context, query string, max int) ([]Result, error) {
	var out struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	q := "q=" + url.QueryEscape(query) + "&count=" + strconv.Itoa(clampCount(max))
	call := apiCall{
		provider: b.Name(),
		client:   b.client,
		method:   http.MethodGet,
		url:      b.base + "/res/v1/web/search?" + q,
		header:   map[string]string{"X-Subscription-Token": b.key, "Accept": "application/json"},
	}
	if err := call.do(ctx, &out); err != nil {
		return nil, err
	}
	rs := make([]Result, 0, len(out.Web.Results))
	for _, r := range out.Web.Results {
		rs = append(rs, Result{Title: stripTags(r.Title), URL: r.URL, Snippet: stripTags(r.Description)})
	}
	return limit(rs, max), nil
}

// searxng is a SearXNG instance (https://docs.searxng.org).
type searxng struct {
	base   string
	client *http.Client
}

// NewSearXNG returns a provider asking the SearXNG instance at
// instanceURL, which must allow the json format.
func NewSearXNG(instanceURL string, client *http.Client) Provider {
	return &searxng{base: baseOr(instanceURL, ""), client: client}
}

func (*searxng) Name() string { return "searxng" }

func (s *searxng) Search(ctx context.Context, query string, max int) ([]Result, error) {
	var out struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	q := "q=" + url.QueryEscape(query) + "&format=json"
	call := apiCall{
		provider: s.Name(),
		client:   s.client,
		method:   http.MethodGet,
		url:      s.base + "/search?" + q,
	}
	if err := call.do(ctx, &out); err != nil {
		return nil, err
	}
	rs := make([]Result, 0, len(out.Results))
	for _, r := range out.Results {
		rs = append(rs, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return limit(rs, max), nil
}

// clampCount keeps a requested number of results within what the
// providers accept (1..20).
func clampCount(n int) int {
	if n <= 0 {
		return maxSearchResults
	}
	return min(n, 20)
}

func limit(rs []Result, max int) []Result {
	if max > 0 && len(rs) > max {
		return rs[:max]
	}
	return rs
}

var tagRE = lazyre.New(`<[^<>]*>`)

// stripTags removes HTML tags (Brave marks matches with <strong>) and
// unescapes entities.
func stripTags(s string) string {
	return html.UnescapeString(tagRE().ReplaceAllString(s, ""))
}
