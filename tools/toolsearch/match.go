package toolsearch

import (
	"cmp"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/tools"
)

// Match returns the specs query picks. "select:a,b" picks the named tools
// (exactly, in that order). Otherwise the query's words, case-insensitive,
// are matched against each tool's name and description: a word that is
// the name (or the name after its "<server>_" prefix) counts most, then a
// word in the name, then one in the description. The best MaxResults
// tools with any match come first-best.
func Match(specs []tools.Spec, query string) []tools.Spec {
	query = strings.TrimSpace(query)
	if rest, ok := strings.CutPrefix(query, "select:"); ok {
		return selectNames(specs, rest)
	}
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return r == ' ' || r == ',' || r == '\t' || r == '\n'
	})
	type scored struct {
		spec  tools.Spec
		score int
	}
	var hits []scored
	for _, sp := range specs {
		if n := score(sp, words); n > 0 {
			hits = append(hits, scored{sp, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	out := make([]tools.Spec, 0, min(len(hits), MaxResults))
	for i := 0; i < len(hits) && i < MaxResults; i++ {
		out = append(out, hits[i].spec)
	}
	return out
}

// score is how well the words fit sp (0: not at all).
func score(sp tools.Spec, words []string) int {
	name := strings.ToLower(sp.Name)
	desc := strings.ToLower(sp.Description)
	n := 0
	for _, w := range words {
		switch {
		case name == w || strings.HasSuffix(name, "_"+w):
			n += 10
		case strings.Contains(name, w):
			n += 3
		case strings.Contains(desc, w):
			n++
		}
	}
	return n
}

// selectNames picks the comma-separated names from specs (case-
// insensitive), skipping unknown ones.
func selectNames(specs []tools.Spec, list string) []tools.Spec {
	var out []tools.Spec
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(specs, func(s tools.Spec) bool { return strings.EqualFold(s.Name, name) })
		if i >= 0 && !slices.ContainsFunc(out, func(s tools.Spec) bool { return s.Name == specs[i].Name }) {
			out = append(out, specs[i])
		}
	}
	return out
}
