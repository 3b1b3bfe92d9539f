package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/internal/lazyre"
	"github.com/deerflow/deerflow/tools"
)

// ImageSearchName is the name of the image search tool.
const ImageSearchName = "image_search"

// Image is one image search hit. Width and Height are 0 when unknown.
type Image struct {
	Title        string
	ImageURL     string // the image file
	ThumbnailURL string
	PageURL      string // the page the image appears on
	Width        int
	Height       int
}

// ImageSearcher is a Provider that can also search for images. Every
// provider of NewProvider is one.
type ImageSearcher interface {
	SearchImages(ctx context.Context, query string, max int) ([]Image, error)
}

type imageArgs struct {
	Query      string `json:"query" desc:"What the pictures should show, as you would type it into an image search."`
	MaxResults int    `json:"max_results,omitempty" desc:"How many images to return, 1 to 10."`
}

// ImageSearchTool returns the image_search tool asking p, which answers
// with an error for the model when p cannot search for images.
// maxResults is the default number of images (5 when not positive; at
// most 10).
func ImageSearchTool(p Provider, maxResults int) tools.Tool {
	if maxResults <= 0 {
		maxResults = 5
	}
	maxResults = min(maxResults, maxSearchResults)
	desc := fmt.Sprintf("Search the web for images. Returns up to %d images (max_results up to %d), each with title, image URL, thumbnail URL, "+
		"the page it appears on and its size when known. Use it when a task needs pictures; check the page for the image's licence before reusing it.",
		maxResults, maxSearchResults)
	return tools.Func(ImageSearchName, desc, func(ctx context.Context, in imageArgs) (string, error) {
		q := strings.TrimSpace(in.Query)
		if q == "" {
			return "", &tools.ArgError{Tool: ImageSearchName, Msg: "query must not be empty"}
		}
		n := in.MaxResults
		if n <= 0 {
			n = maxResults
		}
		n = min(n, maxSearchResults)
		is, ok := p.(ImageSearcher)
		if !ok {
			return "", fmt.Errorf("image_search is not available with the %s search provider; configure duckduckgo, brave, searxng or tavily", p.Name())
		}
		imgs, err := is.SearchImages(ctx, q, n)
		if err != nil {
			return "", err
		}
		return formatImages(p.Name(), q, imgs, n), nil
	})
}

func formatImages(provider, q string, imgs []Image, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Images from %s for %q:\n", provider, q)
	seen := map[string]bool{}
	i := 0
	for _, im := range imgs {
		u := absURL(im.ImageURL)
		if u == "" || seen[u] || i == n {
			continue
		}
		seen[u] = true
		i++
		title := collapseSpace(im.Title)
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(&b, "\n%d. %s\n   image: %s\n", i, clipRunes(title, 200), u)
		if t := absURL(im.ThumbnailURL); t != "" {
			fmt.Fprintf(&b, "   thumbnail: %s\n", t)
		}
		if p := absURL(im.PageURL); p != "" {
			fmt.Fprintf(&b, "   page: %s\n", p)
		}
		if im.Width > 0 && im.Height > 0 {
			fmt.Fprintf(&b, "   size: %d×%d\n", im.Width, im.Height)
		}
	}
	if i == 0 {
		return fmt.Sprintf("No images for %q.", q)
	}
	return strings.TrimRight(b.String(), "\n")
}

// absURL returns u when it is an http(s) URL, made absolute when it is
// protocol-relative (//host/…); anything else (data: URIs, paths) is "".
func absURL(u string) string {
	u = strings.TrimSpace(u)
	if strings.HasPrefix(u, "//") {
		u = "https:" + u
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	return u
}

func limitImages(imgs []Image, max int) []Image {
	if max > 0 && len(imgs) > max {
		return imgs[:max]
	}
	return imgs
}

// SearchImages asks Brave's image search API.
func (b *brave) SearchImages(ctx context.Context, query string, max int) ([]Image, error) {
	var out struct {
		Results []struct {
			Title     string `json:"title"`
			URL       string `json:"url"`
			Thumbnail struct {
				Src string `json:"src"`
			} `json:"thumbnail"`
			Properties struct {
				URL    string `json:"url"`
				Width  int    `json:"width"`
				Height int    `json:"height"`
			} `json:"properties"`
		} `json:"results"`
	}
	q := "q=" + url.QueryEscape(query) + "&count=" + strconv.Itoa(clampCount(max)) + "&safesearch=strict"
	call := apiCall{
		provider: b.Name(),
		client:   b.client,
		method:   http.MethodGet,
		url:      b.base + "/res/v1/images/search?" + q,
		header:   map[string]string{"X-Subscription-Token": b.key, "Accept": "application/json"},
	}
	if err := call.do(ctx, &out); err != nil {
		return nil, err
	}
	imgs := make([]Image, 0, len(out.Results))
	for _, r := range out.Results {
		imgs = append(imgs, Image{Title: stripTags(r.Title), ImageURL: r.Properties.URL, ThumbnailURL: r.Thumbnail.Src,
			PageURL: r.URL, Width: r.Properties.Width, Height: r.Properties.Height})
	}
	return limitImages(imgs, max), nil
}

// resolutionRE reads SearXNG's resolution, "1920x1080" or "1920 × 1080".
var resolutionRE = lazyre.New(`^\s*(\d+)\s*[x×X]\s*(\d+)\s*$`)

// SearchImages asks the SearXNG instance's images category.
func (s *searxng) SearchImages(ctx context.Context, query string, max int) ([]Image, error) {
	var out struct {
		Results []struct {
			Title        string `json:"title"`
			URL          string `json:"url"`
			ImgSrc       string `json:"img_src"`
			ThumbnailSrc string `json:"thumbnail_src"`
			Resolution   string `json:"resolution"`
		} `json:"results"`
	}
	call := apiCall{
		provider: s.Name(),
		client:   s.client,
		method:   http.MethodGet,
		url:      s.base + "/search?q=" + url.QueryEscape(query) + "&format=json&categories=images",
	}
	if err := call.do(ctx, &out); err != nil {
		return nil, err
	}
	imgs := make([]Image, 0, len(out.Results))
	for _, r := range out.Results {
		im := Image{Title: r.Title, ImageURL: r.ImgSrc, ThumbnailURL: r.ThumbnailSrc, PageURL: r.URL}
		if m := resolutionRE().FindStringSubmatch(r.Resolution); m != nil {
			im.Width, _ = strconv.Atoi(m[1])
			im.Height, _ = strconv.Atoi(m[2])
		}
		imgs = append(imgs, im)
	}
	return limitImages(imgs, max), nil
}

// SearchImages asks Tavily with include_images, which gives image URLs
// with a description but not the page they come from.
func (t *tavily) SearchImages(ctx context.Context, query string, max int) ([]Image, error) {
	var out struct {
		Images []json.RawMessage `json:"images"`
	}
	call := apiCall{
		provider: t.Name(),
		client:   t.client,
		method:   http.MethodPost,
		url:      t.base + "/search",
		header:   map[string]string{"Authorization": "Bearer " + t.key},
		body: map[string]any{
			"query":                      query,
			"max_results":                clampCount(max),
			"include_images":             true,
			"include_image_descriptions": true,
		},
	}
	if err := call.do(ctx, &out); err != nil {
		return nil, err
	}
	imgs := make([]Image, 0, len(out.Images))
	for _, raw := range out.Images {
		var im struct {
			URL         string `json:"url"`
			Description string `json:"description"`
		}
		if json.Unmarshal(raw, &im) != nil {
			_ = json.Unmarshal(raw, &im.URL) // a bare URL without descriptions
		}
		imgs = append(imgs, Image{Title: im.Description, ImageURL: im.URL})
	}
	return limitImages(imgs, max), nil
}
