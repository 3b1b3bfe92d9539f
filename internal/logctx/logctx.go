// Package logctx carries log attributes in a context: a run's id is put in
// the context its work runs under, and the process's slog handler (Wrap)
// adds it to every line logged with that context (slog's *Context
// methods), whichever package logs it.
package logctx

import (
	"context"
	"log/slog"
)

type key struct{}

// With returns ctx carrying attrs (after any it already carries).
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(key{}).([]slog.Attr)
	all := make([]slog.Attr, 0, len(prev)+len(attrs))
	all = append(append(all, prev...), attrs...)
	return context.WithValue(ctx, key{}, all)
}

// Wrap returns h adding the attributes of each record's context.
func Wrap(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ slog.Handler }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if attrs, ok := ctx.Value(key{}).([]slog.Attr); ok {
			r.AddAttrs(attrs...)
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{h.Handler.WithAttrs(attrs)}
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{h.Handler.WithGroup(name)}
}
