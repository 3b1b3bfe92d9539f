package lazyre

import "testing"

func TestNew(t *testing.T) {
	re := New(`^a+b$`)
	if !re().MatchString("aab") || re().MatchString("ab c") {
		t.Error("wrong matches")
	}
	if re() != re() {
		t.Error("compiled more than once")
	}
	bad := New(`(`)
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic on use")
		}
	}()
	bad()
}
