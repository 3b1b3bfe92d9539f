package lark

import "testing"

func TestInstanceName(t *testing.T) {
	for name, want := range map[string]string{"": "lark", "lark-intl": "lark-intl"} {
		c, err := New(Options{Name: name, AppID: "cli_1", AppSecret: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if c.Name() != want || c.o.Key == "" {
			t.Errorf("Name() = %q, want %q", c.Name(), want)
		}
	}
}
