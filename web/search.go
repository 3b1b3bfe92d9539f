package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deerflow/deerflow/tools"
)

// SearchName is the name of the search tool.
const SearchName = "web_search"

// searchTimeout bounds a provider call when its client sets no timeout.
const searchTimeout = 20 * time.Second

// maxSearchResults is the most results one web_search call returns.
const maxSearchResults = 10

// Result is one search hit.
type Result struct{ Title, URL, Snippet string }

// Provider is a web search service.
type Provider interface {
	Name() string
	Search(ctx context.Context, query string, max int) ([]Result, error)
}

// NewProvider returns the named provider: "duckduckgo" (also for "": it
// needs no key; baseURL "" means the public service, anything else a
// stand-in such as a test's fake engine), "tavily" or "brave" (both need
// apiKey; baseURL "" means the public API) or "searxng" (baseURL is the
// instance's URL). A nil client means a default one.
func NewProvider(name, apiKey, baseURL string, client *http.Client) (Provider, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	apiKey = strings.TrimSpace(apiKey)
	baseURL = strings.TrimSpace(baseURL)
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("the %s search provider's URL %q is not an http or https URL", name, baseURL)
		}
	}
	switch name {
	case "duckduckgo", "":
		return NewDuckDuckGo(baseURL, client), nil
	case "tavily":
		if apiKey == "" {
			return nil, errors.New("the tavily search provider needs an API key")
		}
		return NewTavily(apiKey, baseURL, client), nil
	case "brave":
		if apiKey == "" {
			return nil, errors.New("the brave search provider needs an API key")
		}
		return NewBrave(apiKey, baseURL, client), nil
	case "searxng":
		if baseURL == "" {
			return nil, errors.New("the searxng search provider needs the URL of a SearXNG instance")
		}
		return NewSearXNG(baseURL, client), nil
	}
	return nil, fmt.Errorf("unknown search provider %q; use duckduckgo, tavily, brave or searxng", name)
}

type searchArgs struct {
	Query      string `json:"query" desc:"What to search for, as you would type it into a search engine."`
	MaxResults int    `json:"max_results,omitempty" desc:"How many results to return, 1 to 10."`
}

// SearchTool returns the web_search tool asking p. maxResults is the
// default number of results (5 when not positive; at most 10).
func SearchTool(p Provider, maxResults int) tools.Tool {
	if maxResults <= 0 {
		maxResults = 5
	}
	maxResults = min(maxResults, maxSearchResults)
	desc := fmt.Sprintf("Search the web. Returns up to %d results (max_results up to %d), each with title, URL and a snippet. "+
		"Use it to find current information or sources; then read a promising page in full with web_fetch.", maxResults, maxSearchResults)
	return tools.Func(SearchName, desc, func(ctx context.Context, in searchArgs) (string, error) {
		q := strings.TrimSpace(in.Query)
		if q == "" {
			return "", &tools.ArgError{Tool: SearchName, Msg: "query must not be empty"}
		}
		n := in.MaxResults
		if n <= 0 {
			n = maxResults
		}
		n = min(n, maxSearchResults)
		results, err := p.Search(ctx, q, n)
		if err != nil {
			return "", err
		}
		return formatResults(p.Name(), q, results, n), nil
	})
}

func formatResults(provider, q string, results []Result, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Results from %s for %q:\n", provider, q)
	seen := map[string]bool{}
	i := 0
	for _, r := range results {
		u := strings.TrimSpace(r.URL)
		if u == "" || seen[u] || i == n {
			continue
		}
		seen[u] = true
		i++
		title := collapseSpace(r.Title)
		if title == "" {
			title = u
		}
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i, title, u)
		if s := collapseSpace(r.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", clipRunes(s, 300))
		}
	}
	if i == 0 {
		return fmt.Sprintf("No results for %q.", q)
	}
	return strings.TrimRight(b.String(), "\n")
}

// clipRunes shortens s to at most n characters, marking the cut with "…".
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// apiCall is one request to a search provider.
type apiCall struct {
	provider string
	client   *http.Client
	method   string
	url      string
	header   map[string]string
	body     any // sent as JSON when not nil
}

// do sends c and decodes the JSON answer into out, turning failures into
// sentences for the model.
func (c apiCall) do(ctx context.Context, out any) error {
	client := c.client
	if client == nil {
		client = http.DefaultClient
	}
	if client.Timeout == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, searchTimeout)
		defer cancel()
	}
	var body io.Reader
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return fmt.Errorf("the %s search request could not be made: %v", c.provider, err)
	}
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return c.describe(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return c.describe(ctx, err)
	}
	if err := c.statusError(resp.StatusCode, data); err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the search provider (%s) sent an answer that is not the expected JSON", c.provider)
	}
	return nil
}

func (c apiCall) statusError(code int, body []byte) error {
	switch {
	case code >= 200 && code <= 299:
		return nil
	case (code == http.StatusUnauthorized || code == http.StatusForbidden) && c.provider == "searxng":
		return fmt.Errorf("the SearXNG instance refused the request (%d); it may need the json format enabled in its settings", code)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return errors.New("the search provider refused the API key")
	case code == http.StatusTooManyRequests:
		return errors.New("rate limited by the search provider; try again later")
	case code >= 500:
		return fmt.Errorf("the search provider failed (%d)", code)
	}
	msg := fmt.Sprintf("the search provider rejected the request (%d %s)", code, http.StatusText(code))
	if s := collapseSpace(strings.ToValidUTF8(string(body), "")); s != "" {
		msg += ": " + clipRunes(s, 200)
	}
	return errors.New(msg)
}

func (c apiCall) describe(ctx context.Context, err error) error {
	var netErr net.Error
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return errors.New("the search was cancelled")
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		t := searchTimeout
		if c.client != nil && c.client.Timeout > 0 {
			t = c.client.Timeout
		}
		return fmt.Errorf("the search provider (%s) did not answer within %s", c.provider, t)
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return fmt.Errorf("could not reach the search provider (%s): %v", c.provider, err)
}
