package choice

import (
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		rec  string
		opt  int
		want bool
	}{
		{"0123456789abcdef.1", "0123456789abcdef", 0, true},
		{"0123456789abcdef.12", "0123456789abcdef", 11, true},
		{"0123456789abcdef.0", "", 0, false},
		{"0123456789abcdef.101", "", 0, false},
		{"0123456789abcdef", "", 0, false},
		{"0123456789abcdeg.1", "", 0, false}, // not hex
		{"../../etc.1", "", 0, false},
		{"", "", 0, false},
	} {
		rec, opt, ok := ParseID(tc.id)
		if ok != tc.want || rec != tc.rec || opt != tc.opt {
			t.Errorf("ParseID(%q) = %q, %d, %v", tc.id, rec, opt, ok)
		}
	}
}

func TestButtons(t *testing.T) {
	r := &Record{ID: NewID(), Options: []string{"small", "big", strings.Repeat("x", 100)}, Current: 2, Replies: []string{"", "/models big"}}
	rows := r.Buttons()
	if len(rows) != 3 || rows[1][0].Text != "✓ big" || rows[0][0].Text != "small" {
		t.Fatalf("buttons = %v", rows)
	}
	if n := len([]rune(rows[2][0].Text)); n != maxButtonText {
		t.Errorf("a long option's label has %d characters", n)
	}
	for i, row := range rows {
		rec, opt, ok := ParseID(row[0].ID)
		if !ok || rec != r.ID || opt != i || len(row[0].ID) > 64 {
			t.Errorf("button %d id %q", i, row[0].ID)
		}
	}
	if r.Reply(0) != "small" || r.Reply(1) != "/models big" || r.Reply(2) != r.Options[2] {
		t.Errorf("replies: %q %q %q", r.Reply(0), r.Reply(1), r.Reply(2))
	}
}
