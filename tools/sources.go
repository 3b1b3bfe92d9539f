package tools

import (
	"context"
	"slices"
	"sync"
)

// Source is a web page a tool actually read.
type Source struct {
	URL   string // as requested
	Title string // the page's title when known
}

// Sources collects the pages read under a context (a research step). It is
// safe for concurrent use; the zero value is ready to use.
type Sources struct {
	mu   sync.Mutex
	list []Source
	at   map[string]int // URL → index in list
}

// sourcesLink is what a context carries: one Sources and the link of the
// context it was made from, so a note reaches every enclosing collector.
type sourcesLink struct {
	s      *Sources
	parent *sourcesLink
}

type sourcesKey struct{}

// WithSources returns ctx carrying s. Pages noted under the result are
// recorded in s and in every Sources ctx already carries, so a whole
// research run and each of its steps can collect. A nil s returns ctx.
func WithSources(ctx context.Context, s *Sources) context.Context {
	if s == nil {
		return ctx
	}
	parent, _ := ctx.Value(sourcesKey{}).(*sourcesLink)
	return context.WithValue(ctx, sourcesKey{}, &sourcesLink{s: s, parent: parent})
}

// NoteSource records a page read under ctx; without a Sources in ctx it
// does nothing. A source without a URL is ignored.
func NoteSource(ctx context.Context, src Source) {
	if src.URL == "" {
		return
	}
	link, _ := ctx.Value(sourcesKey{}).(*sourcesLink)
	for ; link != nil; link = link.parent {
		link.s.add(src)
	}
}

func (s *Sources) add(src Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.at[src.URL]; ok {
		if s.list[i].Title == "" {
			s.list[i].Title = src.Title
		}
		return
	}
	if s.at == nil {
		s.at = make(map[string]int)
	}
	s.at[src.URL] = len(s.list)
	s.list = append(s.list, src)
}

// List returns the recorded sources in the order first read, each URL
// once (a later note with a title fills in an empty title).
func (s *Sources) List() []Source {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}
