// Package web holds the tools that reach the web: web_fetch reads a page
// as Markdown, refusing private and local addresses; web_search and
// image_search ask a search provider (DuckDuckGo without a key, or Tavily,
// Brave or SearXNG).
package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deerflow/deerflow/tools"
)

// FetchName is the name of the fetch tool.
const FetchName = "web_fetch"

// Defaults of FetchOptions.
const (
	DefaultMaxChars  = 4096
	DefaultTimeout   = 20 * time.Second
	DefaultMaxBytes  = 5 << 20
	DefaultUserAgent = "deerflow (+https://github.com/deerflow/deerflow)"
)

// FetchOptions configures web_fetch. Zero values take the defaults.
type FetchOptions struct {
	// AllowPrivate allows private, loopback, link-local, unspecified,
	// multicast, carrier-grade NAT (100.64/10) and unique-local
	// (fc00::/7) addresses. Tests set it.
	AllowPrivate bool
	MaxChars     int           // characters of Markdown returned; default 4096
	Timeout      time.Duration // the whole request; default 20s
	MaxBytes     int64         // read from the body; default 5 MiB
	UserAgent    string        // default DefaultUserAgent
	// Transport is for tests; when nil, a transport that ignores proxies
	// and checks every address it connects to is built.
	Transport http.RoundTripper
}

func (o FetchOptions) withDefaults() FetchOptions {
	if o.MaxChars <= 0 {
		o.MaxChars = DefaultMaxChars
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Transport == nil {
		o.Transport = safeTransport(o.AllowPrivate)
	}
	return o
}

type fetchArgs struct {
	URL      string `json:"url" desc:"The http or https URL of the page to read."`
	MaxChars int    `json:"max_chars,omitempty" desc:"How many characters of the page to return (default and limit are set by the host). Raise it to read more of a page whose result was truncated."`
}

type fetcher struct {
	o      FetchOptions
	client *http.Client
}

// FetchTool returns the web_fetch tool.
func FetchTool(o FetchOptions) tools.Tool {
	o = o.withDefaults()
	f := &fetcher{o: o, client: &http.Client{
		Transport:     o.Transport,
		Timeout:       o.Timeout,
		CheckRedirect: checkRedirect(o.AllowPrivate),
	}}
	desc := fmt.Sprintf("Fetch a web page by URL and read its main content as Markdown (navigation, scripts and ads removed; links made absolute). "+
		"Works for HTML, plain text, Markdown, JSON and CSV; not for PDFs, images or other binary files. "+
		"Returns the first %d characters by default; when the result says it was truncated, call again with a larger max_chars (up to %d). "+
		"Private and local network addresses cannot be fetched.", o.MaxChars, 4*o.MaxChars)
	return tools.Func(FetchName, desc, f.run)
}

func (f *fetcher) run(ctx context.Context, in fetchArgs) (string, error) {
	raw := strings.TrimSpace(in.URL)
	if raw == "" {
		return "", &tools.ArgError{Tool: FetchName, Msg: "url must not be empty"}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", &tools.ArgError{Tool: FetchName, Msg: fmt.Sprintf("url %q is not a valid URL", raw)}
	}
	if err := checkURL(u, f.o.AllowPrivate); err != nil {
		var be *blockedError
		if errors.As(err, &be) {
			return "", err
		}
		return "", &tools.ArgError{Tool: FetchName, Msg: err.Error()}
	}
	limit := in.MaxChars
	if limit <= 0 {
		limit = f.o.MaxChars
	}
	limit = min(limit, 4*f.o.MaxChars)

	p, err := f.fetch(ctx, u)
	if err != nil {
		return "", err
	}
	if p.md != "" {
		// The URL the model asked for, not where redirects led: that is
		// the one it knows and cites.
		tools.NoteSource(ctx, tools.Source{URL: raw, Title: p.title})
	}
	md := p.md
	if md == "" {
		md = "(the page has no readable text)"
	}
	if p.cut {
		md += fmt.Sprintf("\n\n[the page is larger than %d bytes; only its beginning was read]", f.o.MaxBytes)
	}
	return "URL: " + p.url + "\n\n" + truncate(md, limit, 4*f.o.MaxChars), nil
}

// page is what fetch read.
type page struct {
	url   string // the final URL, redacted
	title string // the page's title, or its first heading; "" when neither
	md    string // the content as Markdown; "" when it has no readable text
	cut   bool   // the body was larger than MaxBytes
}

// fetch gets u and returns its content as Markdown.
func (f *fetcher) fetch(ctx context.Context, u *url.URL) (page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return page{}, fmt.Errorf("cannot fetch %s: %v", redact(u), err)
	}
	req.Header.Set("User-Agent", f.o.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return page{}, f.describe(ctx, redact(u), err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	finalStr := redact(final)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return page{}, statusError(resp, finalStr)
	}

	mediaType, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	mediaType = strings.ToLower(mediaType)
	if mediaType != "" && mediaType != "application/octet-stream" && kindOf(mediaType) == kindOther {
		return page{}, unsupported(finalStr, mediaType)
	}

	body, err := io.ReadAll(io.LimitReader(resp.Body, f.o.MaxBytes+1))
	if err != nil {
		return page{}, f.describe(ctx, finalStr, err)
	}
	cut := int64(len(body)) > f.o.MaxBytes
	if cut {
		body = body[:f.o.MaxBytes]
	}
	if mediaType == "" || mediaType == "application/octet-stream" {
		sniffed, sp, _ := mime.ParseMediaType(http.DetectContentType(body))
		if kindOf(sniffed) == kindOther {
			if mediaType == "" {
				mediaType = sniffed
			}
			return page{}, unsupported(finalStr, mediaType)
		}
		mediaType, params = sniffed, sp
	}

	p, err := readPage(ctx, body, mediaType, params["charset"], final)
	p.cut = cut
	return p, err
}

// statusError words a response that is not a success.
func statusError(resp *http.Response, finalStr string) error {
	status := resp.Status
	if !strings.HasPrefix(status, fmt.Sprint(resp.StatusCode)) {
		status = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return fmt.Errorf("the server answered %s for %s", strings.TrimSpace(status), finalStr)
}

// readPage turns a fetched body of mediaType, from final, into Markdown
// with a title.
func readPage(ctx context.Context, body []byte, mediaType, charset string, final *url.URL) (page, error) {
	finalStr := redact(final)
	p := page{url: finalStr}
	kind := kindOf(mediaType)
	text := decodeText(body, charset, kind == kindHTML)
	if kind == kindHTML {
		var err error
		p.md, p.title, err = htmlToMarkdown(ctx, text, final)
		if err != nil {
			return page{}, fmt.Errorf("could not read the HTML of %s: %v", finalStr, err)
		}
	} else {
		p.md = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	}
	if p.title == "" {
		p.title = firstHeading(p.md)
	}
	p.title = clipTitle(p.title)
	return p, nil
}

// maxTitle is the most characters of a title kept for a source.
const maxTitle = 200

// clipTitle shortens a title longer than maxTitle characters.
func clipTitle(s string) string {
	if utf8.RuneCountInString(s) <= maxTitle {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:maxTitle-1])) + "…"
}

type contentKind int

const (
	kindOther contentKind = iota
	kindHTML
	kindText
)

func kindOf(mediaType string) contentKind {
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		return kindHTML
	case strings.HasPrefix(mediaType, "text/"),
		mediaType == "application/json", strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", strings.HasSuffix(mediaType, "+xml"),
		mediaType == "application/x-ndjson", mediaType == "application/javascript":
		return kindText
	}
	return kindOther
}

func unsupported(u, mediaType string) error {
	return fmt.Errorf("cannot read %s: its content type %s is not supported (web_fetch reads HTML and text pages only)", u, mediaType)
}

// describe turns a request error into one sentence for the model.
func (f *fetcher) describe(ctx context.Context, u string, err error) error {
	orig := u
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != "" {
		if pu, perr := url.Parse(ue.URL); perr == nil && pu.IsAbs() {
			u = redact(pu)
		}
	}
	var be *blockedError
	var re *refusedError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &be):
		if be.url == "" {
			return &blockedError{url: u, addr: be.addr}
		}
		return be
	case errors.As(err, &re):
		return re
	case errors.Is(err, errTooManyRedirects):
		return fmt.Errorf("stopped fetching %s: it redirected more than %d times", orig, maxRedirects)
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("fetching %s ran out of time", u)
		}
		return fmt.Errorf("fetching %s was cancelled", u)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Errorf("fetching %s timed out after %s", u, f.o.Timeout)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("could not fetch %s: the host name %s could not be resolved", u, dnsErr.Name)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		cause := opErr.Err
		var se *os.SyscallError
		if errors.As(cause, &se) {
			cause = se.Err
		}
		return fmt.Errorf("could not connect to the server of %s: %v", u, cause)
	}
	if ue != nil && ue.Err != nil {
		err = ue.Err
	}
	return fmt.Errorf("could not fetch %s: %v", u, err)
}

// truncate shortens md to limit characters, saying so; most is the
// largest max_chars the tool accepts.
func truncate(md string, limit, most int) string {
	total := utf8.RuneCountInString(md)
	if total <= limit {
		return md
	}
	i, n := 0, 0
	for i < len(md) && n < limit {
		_, size := utf8.DecodeRuneInString(md[i:])
		i += size
		n++
	}
	if limit >= most {
		return md[:i] + fmt.Sprintf("\n\n[truncated: showing the first %d of %d characters, the most %s returns]", limit, total, FetchName)
	}
	return md[:i] + fmt.Sprintf("\n\n[truncated: showing the first %d of %d characters; call %s with a larger max_chars to read more]", limit, total, FetchName)
}
