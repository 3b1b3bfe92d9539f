package web

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// parseDDGPage reads DuckDuckGo's HTML results page: each organic result
// is a div.result (ads carry result--ad) holding a.result__a (title and
// link) and a .result__snippet. A page saying "No results." gives none;
// a page with neither results nor that note has changed its shape, which
// is an error rather than "no results".
func parseDDGPage(body []byte) ([]Result, error) {
	if isBotCheck(body) {
		return nil, errDDGRefused
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, errDDGUnreadable
	}
	var rs []Result
	empty := false
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if hasClass(n, "no-results") {
			empty = true
			return false
		}
		if n.DataAtom != atom.Div || !hasClass(n, "result") {
			return true
		}
		if hasClass(n, "result--ad") {
			return false
		}
		if r, ok := readDDGResult(n); ok {
			rs = append(rs, r)
			return false
		}
		return true // the "No results." note sits inside a result div
	})
	if len(rs) == 0 && !empty {
		return nil, errDDGUnreadable
	}
	return rs, nil
}

// readDDGResult reads one result div; ok is false when it has no link to
// a page outside DuckDuckGo.
func readDDGResult(n *html.Node) (r Result, ok bool) {
	link := findClass(n, "result__a")
	if link == nil {
		return Result{}, false
	}
	u, ok := unwrapDDG(attr(link, "href"))
	if !ok {
		return Result{}, false
	}
	return Result{Title: innerText(link), URL: u, Snippet: innerText(findClass(n, "result__snippet"))}, true
}

// unwrapDDG returns the page a result link leads to. DuckDuckGo wraps
// links as //duckduckgo.com/l/?uddg=<escaped URL>&rut=…; its other links
// (ads through /y.js, its own pages) are not results.
func unwrapDDG(href string) (string, bool) {
	href = strings.TrimSpace(href)
	if strings.HasPrefix(href, "//") {
		href = "https:" + href
	}
	u, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	if u.Host == "" || isDDGHost(u.Hostname()) {
		if strings.TrimSuffix(u.Path, "/") != "/l" {
			return "", false
		}
		target := u.Query().Get("uddg")
		if u, err = url.Parse(target); err != nil {
			return "", false
		}
		href = target
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || isDDGHost(u.Hostname()) {
		return "", false
	}
	return href, true
}

func isDDGHost(host string) bool {
	host = strings.ToLower(host)
	return host == "duckduckgo.com" || strings.HasSuffix(host, ".duckduckgo.com")
}

// ddgBotMarkers are bytes any bot check page holds; a page holding one is
// parsed to be sure, since a results page may quote them in its text.
var ddgBotMarkers = [][]byte{[]byte("anomaly"), []byte("challenge-form")}

// isBotCheck reports whether body is DuckDuckGo's "bots use DuckDuckGo
// too" page: its anomaly-modal elements, challenge-form or anomaly.js
// script. Only markup counts, so a query about anomalies does not.
func isBotCheck(body []byte) bool {
	found := false
	for _, m := range ddgBotMarkers {
		found = found || bytes.Contains(body, m)
	}
	if !found {
		return false
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return false
	}
	bot := false
	walk(doc, func(n *html.Node) bool {
		if bot || n.Type != html.ElementNode {
			return !bot
		}
		switch {
		case strings.Contains(attr(n, "class"), "anomaly-modal"),
			n.DataAtom == atom.Form && attr(n, "id") == "challenge-form",
			n.DataAtom == atom.Script && strings.Contains(attr(n, "src"), "anomaly.js"):
			bot = true
		}
		return !bot
	})
	return bot
}

// hasClass reports whether n's class attribute lists c.
func hasClass(n *html.Node, c string) bool {
	for _, f := range strings.Fields(attr(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

// findClass returns the first element under n (n included) of class c.
func findClass(n *html.Node, c string) *html.Node {
	var found *html.Node
	walk(n, func(m *html.Node) bool {
		if found == nil && m.Type == html.ElementNode && hasClass(m, c) {
			found = m
		}
		return found == nil
	})
	return found
}

// innerText is n's text as a reader sees it: inline tags (DuckDuckGo's
// <b> highlights) add no spaces, runs of white space become one.
func innerText(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	walk(n, func(m *html.Node) bool {
		if m.Type == html.TextNode {
			b.WriteString(m.Data)
		}
		return true
	})
	return collapseSpace(b.String())
}
