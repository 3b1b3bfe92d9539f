package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/deerflow/deerflow/internal/lazyre"
)

// DuckDuckGo's addresses: the results page for browsers without
// JavaScript, and the site whose search page hands out the token image
// search needs.
const (
	DuckDuckGoHTMLURL = "https://html.duckduckgo.com/html/"
	DuckDuckGoURL     = "https://duckduckgo.com"
)

// ddgInterval is the least time between the end of one request to
// DuckDuckGo and the start of the next: it answers bursts with a bot check.
const ddgInterval = 2 * time.Second

// ddgUserAgent is a browser's: DuckDuckGo answers clients that name
// themselves (curl, libraries) with its bot check more often.
const ddgUserAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// Errors from DuckDuckGo, worded for the model.
var (
	errDDGRefused    = errors.New("DuckDuckGo refused the search (rate limited or a bot check); try again later or configure tavily, brave or searxng")
	errDDGUnreadable = errors.New("could not read DuckDuckGo's results page; its layout may have changed, so configure tavily, brave or searxng")
)

// duckduckgo needs no key: it reads DuckDuckGo's HTML results page and,
// for images, the JSON its image search page loads.
type duckduckgo struct {
	htmlURL string // the results page, POSTed to
	siteURL string // serves / (the vqd token) and /i.js (images)
	client  *http.Client
	pace    *pacer
}

// NewDuckDuckGo returns the keyless DuckDuckGo provider. baseURL "" means
// the public service, which is then reached only at public addresses (the
// same check as web_fetch's); another baseURL (a test's fake engine) serves
// /html/, / and /i.js itself and may be a local address. A nil client
// means a default one with that address check.
func NewDuckDuckGo(baseURL string, client *http.Client) Provider {
	d := &duckduckgo{htmlURL: DuckDuckGoHTMLURL, siteURL: DuckDuckGoURL, client: client, pace: newPacer(ddgInterval)}
	overridden := strings.TrimSpace(baseURL) != ""
	if overridden {
		b := baseOr(baseURL, "")
		d.htmlURL, d.siteURL = b+"/html/", b
	}
	if d.client == nil {
		d.client = &http.Client{
			Transport:     safeTransport(overridden),
			Timeout:       searchTimeout,
			CheckRedirect: checkRedirect(overridden),
		}
	}
	return d
}

func (*duckduckgo) Name() string { return "duckduckgo" }

func (d *duckduckgo) Search(ctx context.Context, query string, max int) ([]Result, error) {
	release, err := d.pace.turn(ctx)
	if err != nil {
		return nil, waitError(err)
	}
	defer release()
	form := url.Values{"q": {query}, "b": {""}, "kl": {""}, "df": {""}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.htmlURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("the duckduckgo search request could not be made: %v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	req.Header.Set("Referer", d.htmlURL)
	body, err := d.do(req)
	if err != nil {
		return nil, err
	}
	rs, err := parseDDGPage(body)
	if err != nil {
		return nil, err
	}
	return limit(rs, max), nil
}

// SearchImages asks DuckDuckGo's image search: its search page hands out
// a token (vqd) that the JSON endpoint i.js requires.
func (d *duckduckgo) SearchImages(ctx context.Context, query string, max int) ([]Image, error) {
	release, err := d.pace.turn(ctx)
	if err != nil {
		return nil, waitError(err)
	}
	defer release()
	vqd, err := d.vqd(ctx, query)
	if err != nil {
		return nil, err
	}
	q := url.Values{"l": {"wt-wt"}, "o": {"json"}, "q": {query}, "vqd": {vqd}, "f": {",,,,,"}, "p": {"1"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.siteURL+"/i.js?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("the duckduckgo image search request could not be made: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Referer", d.siteURL+"/")
	body, err := d.do(req)
	if err != nil {
		return nil, err
	}
	var out struct {
		Results []struct {
			Title     string `json:"title"`
			Image     string `json:"image"`
			Thumbnail string `json:"thumbnail"`
			URL       string `json:"url"`
			Width     int    `json:"width"`
			Height    int    `json:"height"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, errors.New("could not read DuckDuckGo's image results; configure brave or searxng for image_search")
	}
	imgs := make([]Image, 0, len(out.Results))
	for _, r := range out.Results {
		imgs = append(imgs, Image{Title: r.Title, ImageURL: r.Image, ThumbnailURL: r.Thumbnail, PageURL: r.URL, Width: r.Width, Height: r.Height})
	}
	return limitImages(imgs, max), nil
}

// vqdRE finds the token in DuckDuckGo's search page, written as
// vqd="4-123…", vqd='4-123…' or vqd=4-123…& in its scripts.
var vqdRE = lazyre.New(`vqd=["']?([0-9]+-[0-9-]+)`)

func (d *duckduckgo) vqd(ctx context.Context, query string) (string, error) {
	q := url.Values{"q": {query}, "iax": {"images"}, "ia": {"images"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.siteURL+"/?"+q.Encode(), nil)
	if err != nil {
		return "", fmt.Errorf("the duckduckgo image search request could not be made: %v", err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	body, err := d.do(req)
	if err != nil {
		return "", err
	}
	m := vqdRE().FindSubmatch(body)
	if m == nil {
		return "", errors.New("could not start a DuckDuckGo image search: its page has changed; configure brave or searxng for image_search")
	}
	return string(m[1]), nil
}

// do sends req and returns the body of a 200 answer. DuckDuckGo refuses
// with its bot check page, served as 202 (a success status) or 200, or
// with 403 or 429.
func (d *duckduckgo) do(req *http.Request) ([]byte, error) {
	ctx := req.Context()
	if d.client.Timeout == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, searchTimeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	req.Header.Set("User-Agent", ddgUserAgent)
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, apiCall{provider: d.Name(), client: d.client}.describe(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, apiCall{provider: d.Name(), client: d.client}.describe(ctx, err)
	}
	switch code := resp.StatusCode; {
	case code == http.StatusOK && isBotCheck(body):
		return nil, errDDGRefused
	case code == http.StatusOK:
		return body, nil
	case code == http.StatusAccepted, code == http.StatusForbidden, code == http.StatusTooManyRequests:
		return nil, errDDGRefused
	default:
		return nil, fmt.Errorf("DuckDuckGo failed (%d %s); try again later or configure tavily, brave or searxng", code, http.StatusText(code))
	}
}

// waitError words the end of a wait for the pacer's turn.
func waitError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("the search timed out waiting for earlier DuckDuckGo searches (one runs at a time)")
	}
	return errors.New("the search was cancelled")
}

// pacer lets one request run at a time, each starting at least interval
// after the previous one ended.
type pacer struct {
	interval time.Duration
	slot     chan struct{} // full while a request holds the turn
	next     time.Time     // earliest start of the next request; guarded by slot
}

func newPacer(interval time.Duration) *pacer {
	return &pacer{interval: interval, slot: make(chan struct{}, 1)}
}

// turn waits for the caller's turn; release ends it.
func (p *pacer) turn(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case p.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if wait := time.Until(p.next); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			<-p.slot
			return nil, ctx.Err()
		}
	}
	return func() {
		p.next = time.Now().Add(p.interval)
		<-p.slot
	}, nil
}
