package config

import (
	"strings"
	"testing"
)

func TestSchedulerKeys(t *testing.T) {
	c, err := parse([]byte("scheduler:\n  enabled: false\n  max_failures: 5\n"), "config.yaml", mapLookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Scheduler; s.Enabled || s.MaxFailures != 5 || s.MinIntervalSeconds != 60 || s.MaxPerUser != 20 || s.Timezone != "UTC" {
		t.Errorf("scheduler = %+v", s)
	}
	bad, err := parse([]byte("scheduler:\n  timezone: Mars/Olympus\n  max_per_user: -1\n"), "config.yaml", mapLookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	msg := bad.Validate().Error()
	for _, want := range []string{"config.yaml:2: scheduler.timezone: must be an IANA time zone", "scheduler.max_per_user: must be between 1 and 10000"} {
		if !strings.Contains(msg, want) {
			t.Errorf("validation says %q; want %q", msg, want)
		}
	}
}
