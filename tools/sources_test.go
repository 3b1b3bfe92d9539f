package tools

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestSources(t *testing.T) {
	var s Sources
	ctx := WithSources(context.Background(), &s)
	NoteSource(ctx, Source{URL: "https://a.example/"})
	NoteSource(ctx, Source{URL: "https://b.example/", Title: "B"})
	NoteSource(ctx, Source{URL: "https://a.example/", Title: "A"})  // fills in the empty title
	NoteSource(ctx, Source{URL: "https://b.example/", Title: "B2"}) // keeps the first title
	NoteSource(ctx, Source{Title: "no URL"})
	want := []Source{{"https://a.example/", "A"}, {"https://b.example/", "B"}}
	if got := s.List(); !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	// List returns a copy.
	s.List()[0].Title = "changed"
	if s.List()[0].Title != "A" {
		t.Error("List shares its slice")
	}
}

func TestSourcesAbsent(t *testing.T) {
	NoteSource(context.Background(), Source{URL: "https://a.example/"}) // no panic
	ctx := WithSources(context.Background(), nil)
	NoteSource(ctx, Source{URL: "https://a.example/"})
	var s Sources
	if got := s.List(); len(got) != 0 {
		t.Errorf("empty List = %v", got)
	}
}

func TestSourcesNested(t *testing.T) {
	var run, step1, step2 Sources
	ctx := WithSources(context.Background(), &run)
	ctx1 := WithSources(ctx, &step1)
	ctx2 := WithSources(ctx, &step2)
	NoteSource(ctx1, Source{URL: "https://one.example/"})
	NoteSource(ctx2, Source{URL: "https://two.example/"})
	NoteSource(ctx2, Source{URL: "https://one.example/", Title: "One"})
	NoteSource(ctx, Source{URL: "https://run.example/"})

	check := func(name string, s *Sources, want ...Source) {
		t.Helper()
		if got := s.List(); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("step 1", &step1, Source{URL: "https://one.example/"})
	check("step 2", &step2, Source{URL: "https://two.example/"}, Source{"https://one.example/", "One"})
	check("run", &run, Source{"https://one.example/", "One"}, Source{URL: "https://two.example/"}, Source{URL: "https://run.example/"})
}

func TestSourcesConcurrent(t *testing.T) {
	var run Sources
	ctx := WithSources(context.Background(), &run)
	var wg sync.WaitGroup
	steps := make([]Sources, 8)
	for i := range steps {
		ctx := WithSources(ctx, &steps[i])
		wg.Go(func() {
			for j := range 50 {
				NoteSource(ctx, Source{URL: fmt.Sprintf("https://%d.example/", j)})
			}
		})
	}
	wg.Wait()
	if n := len(run.List()); n != 50 {
		t.Errorf("run has %d sources, want 50", n)
	}
	for i := range steps {
		if n := len(steps[i].List()); n != 50 {
			t.Errorf("step %d has %d sources, want 50", i, n)
		}
	}
}
