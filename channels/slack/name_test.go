package slack

import "testing"

func TestInstanceName(t *testing.T) {
	for name, want := range map[string]string{"": "slack", "slack-team-b": "slack-team-b"} {
		c, err := New(Options{Name: name, BotToken: "xoxb-1", AppToken: "xapp-1"})
		if err != nil {
			t.Fatal(err)
		}
		if c.Name() != want || c.o.Key == "" {
			t.Errorf("Name() = %q, want %q", c.Name(), want)
		}
	}
}
