package envvar

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	env := mapLookup(map[string]string{"A": "alpha", "EMPTY": "", "B_2": "beta", "DOLLAR": "$A"})
	tests := []struct {
		in, want string
	}{
		{"plain", "plain"},
		{"$A", "alpha"},
		{"${A}", "alpha"},
		{"x-$A-y", "x-alpha-y"},
		{"${A}x", "alphax"},
		{"$Ax", ""}, // the name is Ax, which is unset
		{"$B_2/$A", "beta/alpha"},
		{"$UNSET", ""},
		{"${UNSET}", ""},
		{"${UNSET:-fallback}", "fallback"},
		{"${EMPTY:-fallback}", "fallback"},
		{"${A:-fallback}", "alpha"},
		{"${UNSET:-}", ""},
		{"${UNSET:-http://h:1/x}", "http://h:1/x"},
		{"${UNSET:-${A}}", "alpha"},
		{"${UNSET:-${ALSO_UNSET:-deep}}", "deep"},
		{"$$", "$"},
		{"$$A", "$A"},
		{"$${A}", "${A}"},
		{"cost: 5$", "cost: 5$"},
		{"$5", "$5"},
		{"a $ b", "a $ b"},
		{"$DOLLAR", "$A"}, // values are not expanded again
		{"${UNSET:-$$}", "$"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, env)
		if err != nil {
			t.Errorf("Expand(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	for _, in := range []string{"${A", "${}", "${1A}", "${A B}", "${A-x}", "${UNSET:-${B}"} {
		if got, err := Expand(in, mapLookup(nil)); err == nil {
			t.Errorf("Expand(%q) = %q, want an error", in, got)
		}
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"$A", "${A:-x}", "$$", "${A:-${B:-$$}}", "${", "a$"} {
		f.Add(s)
	}
	env := mapLookup(map[string]string{"A": "alpha"})
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Expand(s, env)
		if err == nil && !strings.Contains(s, "$") && got != s {
			t.Errorf("Expand(%q) = %q, want it unchanged", s, got)
		}
	})
}

func mapLookup(env map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

// ExpandNamed names the variables that were referenced without a default
// and gave nothing, so a message can say which one to set.
func TestExpandNamed(t *testing.T) {
	env := mapLookup(map[string]string{"A": "alpha", "EMPTY": ""})
	tests := []struct {
		in      string
		missing []string
	}{
		{"$A", nil},
		{"$OPENAI_API_KEY", []string{"OPENAI_API_KEY"}},
		{"${EMPTY}", []string{"EMPTY"}},
		{"${UNSET:-fallback}", nil},
		{"${UNSET:-$ALSO}", []string{"ALSO"}},
		{"$X-$A-${Y}", []string{"X", "Y"}},
		{"$$B", nil},
	}
	for _, tt := range tests {
		_, missing, err := ExpandNamed(tt.in, env)
		if err != nil || strings.Join(missing, ",") != strings.Join(tt.missing, ",") {
			t.Errorf("ExpandNamed(%q) missing %q, %v; want %q", tt.in, missing, err, tt.missing)
		}
	}
}
