// Package logctx carries log attributes in a context: a run's id is put in
// the context its work runs under, and the process's slog handler (Wrap)
// adds it to every line logged with that context (slog's *Context
// methods), whichever package logs it. Wrap also masks the credentials in
// every URL a line carries (message, attributes, errors), so no package has
// to remember to.
package logctx

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/deerflow/deerflow/internal/redact"
)

type key struct{}

// With returns ctx carrying attrs (after any it already carries).
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(key{}).([]slog.Attr)
	all := make([]slog.Attr, 0, len(prev)+len(attrs))
	all = append(append(all, prev...), attrs...)
	return context.WithValue(ctx, key{}, all)
}

// Wrap returns h adding the attributes of each record's context and
// masking credentials in URLs (see package redact).
func Wrap(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ slog.Handler }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if attrs, ok := ctx.Value(key{}).([]slog.Attr); ok {
			r.AddAttrs(attrs...)
		}
	}
	return h.Handler.Handle(ctx, scrub(r))
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i], _ = scrubAttr(a)
	}
	return handler{h.Handler.WithAttrs(clean)}
}

// scrub returns r with credentials in URLs masked; r itself when it has
// none (the common case costs a scan, not a copy).
func scrub(r slog.Record) slog.Record {
	dirty := strings.Contains(r.Message, "://")
	r.Attrs(func(a slog.Attr) bool {
		_, changed := scrubAttr(a)
		dirty = dirty || changed
		return !dirty
	})
	if !dirty {
		return r
	}
	out := slog.NewRecord(r.Time, r.Level, redact.URLs(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		clean, _ := scrubAttr(a)
		out.AddAttrs(clean)
		return true
	})
	return out
}

// scrubAttr masks credentials in URLs in a's value: strings, errors and
// Stringers (a *url.URL), and groups recursively. It reports whether the
// value had a URL.
func scrubAttr(a slog.Attr) (slog.Attr, bool) {
	v := a.Value.Resolve()
	var s string
	switch v.Kind() {
	case slog.KindString:
		s = v.String()
	case slog.KindGroup:
		group := v.Group()
		clean, hit := make([]any, len(group)), false
		for i, g := range group {
			c, changed := scrubAttr(g)
			clean[i], hit = c, hit || changed
		}
		if !hit {
			return a, false
		}
		return slog.Group(a.Key, clean...), true
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		}
	}
	if !strings.Contains(s, "://") {
		return a, false
	}
	return slog.String(a.Key, redact.URLs(s)), true
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{h.Handler.WithGroup(name)}
}
