package lgwire

import (
	"encoding/json"
	"testing"
)

func TestInputText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`{"messages":[{"role":"user","content":"openai"}]}`, "openai", true},
		{`{"messages":[{"type":"human","content":"langchain"}]}`, "langchain", true},
		{`{"messages":[{"type":"human","content":[{"type":"text","text":"a"},"b"]}]}`, "ab", true},
		{`{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"no"}]}`, "first", true},
		{`"a string"`, "", false},
		{`{"messages":[{"role":"assistant","content":"no"}]}`, "", false},
		{`{"messages":"x"}`, "", false},
		{`null`, "", false},
	} {
		got, err := InputText(json.RawMessage(c.in))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("InputText(%s) = %q, %v; want %q (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestParseModes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{``, []string{"values"}, true},
		{`"updates"`, []string{"updates"}, true},
		{`["messages-tuple","values","custom"]`, []string{"values", "messages-tuple", "custom"}, true},
		{`[]`, []string{"values"}, true},
		{`"telepathy"`, nil, false},
		{`[1]`, nil, false},
	} {
		m, err := ParseModes(json.RawMessage(c.in))
		if (err == nil) != c.ok {
			t.Errorf("ParseModes(%s): %v", c.in, err)
			continue
		}
		if c.ok && !equal(m.List(), c.want) {
			t.Errorf("ParseModes(%s) = %v, want %v", c.in, m.List(), c.want)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
