package preflight

import (
	"strings"
	"testing"
)

// Errors make the exit code 1 and come before the warnings; warnings
// alone leave it 0.
func TestFinish(t *testing.T) {
	for _, tt := range []struct {
		errs, warns []string
		code        int
		want        string
	}{
		{nil, nil, 0, ""},
		{nil, []string{"open"}, 0, "\nwarning: open\nno errors, 1 warning(s)\n"},
		{[]string{"bad"}, []string{"open"}, 1, "\nerror: bad\nwarning: open\n1 error(s), 1 warning(s)\n"},
	} {
		var b strings.Builder
		r := &report{errs: tt.errs, warns: tt.warns}
		if code := r.finish(&b); code != tt.code || b.String() != tt.want {
			t.Errorf("finish(%v, %v) = %d %q, want %d %q", tt.errs, tt.warns, code, b.String(), tt.code, tt.want)
		}
	}
}
