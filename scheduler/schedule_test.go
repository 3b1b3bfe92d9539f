package scheduler

import (
	"strings"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no zoneinfo for %s: %v", name, err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestCronAcrossDST follows cron schedules through the daylight-saving
// changes of 2026 in New York (8 March, 1 November) and Berlin (29 March,
// 25 October): wall-clock times stay put, a skipped time runs once just
// after the change, a repeated time runs once.
func TestCronAcrossDST(t *testing.T) {
	cases := []struct {
		name, cron, tz string
		after          string
		want           []string // successive runs, UTC
	}{
		{"weekdays at 9 keep 9 o'clock across spring-forward", "0 9 * * 1-5", "America/New_York", "2026-03-06T00:00:00Z",
			[]string{"2026-03-06T14:00:00Z", "2026-03-09T13:00:00Z", "2026-03-10T13:00:00Z"}},
		{"a time spring-forward skips runs once, an hour later", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"}},
		{"a time fall-back repeats runs once", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"hourly runs once in the repeated hour", "0 * * * *", "America/New_York", "2026-11-01T04:30:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"}},
		{"daily at 9 in Berlin across spring-forward", "0 9 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z",
			[]string{"2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"}},
		{"daily at 9 in Berlin across fall-back", "0 9 * * *", "Europe/Berlin", "2026-10-24T00:00:00Z",
			[]string{"2026-10-24T07:00:00Z", "2026-10-25T08:00:00Z"}},
		{"Berlin's skipped 02:30", "30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"names and a macro", "@weekly", "UTC", "2026-11-25T00:00:00Z",
			[]string{"2026-11-29T00:00:00Z", "2026-12-06T00:00:00Z"}},
		{"day of month or day of week when both are given", "0 12 1 * mon", "UTC", "2026-11-28T00:00:00Z",
			[]string{"2026-11-30T12:00:00Z", "2026-12-01T12:00:00Z", "2026-12-07T12:00:00Z"}},
		{"7 is Sunday", "0 8 * * 7", "UTC", "2026-11-25T00:00:00Z",
			[]string{"2026-11-29T08:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustZone(t, c.tz)
			s := Schedule{Cron: c.cron, TZ: c.tz}
			at := utc(c.after)
			for i, want := range c.want {
				next, ok := s.Next(at)
				if !ok || !next.Equal(utc(want)) {
					t.Fatalf("run %d after %s: got %s (%v), want %s", i+1, at.Format(time.RFC3339), next.UTC().Format(time.RFC3339), ok, want)
				}
				at = next
			}
		})
	}
}

func TestEveryKeepsItsAnchor(t *testing.T) {
	now := utc("2026-11-25T10:00:00Z")
	s, err := Parse(Spec{Every: "90m"}, Limits{MinInterval: time.Minute}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next, _ := s.Next(now); !next.Equal(utc("2026-11-25T11:30:00Z")) {
		t.Errorf("first run %s", next)
	}
	// After a long outage: the next occurrence on the grid, once.
	if next, _ := s.Next(utc("2026-11-26T00:10:00Z")); !next.Equal(utc("2026-11-26T01:00:00Z")) {
		t.Errorf("after an outage %s", next)
	}
	if s.String() != "every 1h30m0s" {
		t.Errorf("String %q", s.String())
	}
}

func TestAtRunsOnce(t *testing.T) {
	now := utc("2026-11-25T10:00:00Z")
	s, err := Parse(Spec{At: "2026-11-25T12:00:00+01:00"}, Limits{MinInterval: time.Minute}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next, ok := s.Next(now); !ok || !next.Equal(utc("2026-11-25T11:00:00Z")) {
		t.Errorf("next %s %v", next, ok)
	}
	if _, ok := s.Next(utc("2026-11-25T11:00:00Z")); ok {
		t.Error("a one-shot has a second run")
	}
	if s.Recurring() {
		t.Error("a one-shot is recurring")
	}
}

func TestParseErrorsSayWhatIsWrong(t *testing.T) {
	now := utc("2026-11-25T10:00:00Z")
	lim := Limits{MinInterval: 5 * time.Minute, Timezone: "UTC"}
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{}, "exactly one of at"},
		{Spec{At: "2026-12-01T09:00:00Z", Every: "1h"}, "exactly one of at"},
		{Spec{At: "2026-12-01 09:00"}, "not an RFC 3339 time"},
		{Spec{At: "2026-12-01T09:00:00"}, "with its offset"},
		{Spec{At: "2026-11-25T09:00:00Z"}, "in the past"},
		{Spec{Every: "soon"}, "not a duration"},
		{Spec{Every: "1m"}, "too often: the shortest interval here is 5m0s"},
		{Spec{Every: "-1h"}, "too often"},
		{Spec{Cron: "0 9 * *"}, "five fields"},
		{Spec{Cron: "61 * * * *"}, "minute field \"61\": 61 is outside 0-59"},
		{Spec{Cron: "0 9 * * mon-fri/x"}, "step"},
		{Spec{Cron: "0 9 5-1 * *"}, "goes backwards"},
		{Spec{Cron: "* * * * *"}, "runs too often"},
		{Spec{Cron: "0 0 31 2 *"}, "never matches"},
		{Spec{Cron: "0 9 * * *", Timezone: "Mars/Olympus"}, "not a known time zone"},
	}
	for _, c := range cases {
		_, err := Parse(c.spec, lim, now)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error saying %q", c.spec, err, c.want)
		}
	}
	if _, err := Parse(Spec{Cron: "0 9 * * 1-5", Timezone: "Europe/Berlin"}, lim, now); err != nil {
		t.Errorf("a good cron: %v", err)
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"0 9 * * 1-5", "*/15 * * * *", "@daily", "0 0 29 2 *", "1,2-5/2 * * jan-mar sun"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		spec, err := parseCron(expr)
		if err != nil {
			return
		}
		after := utc("2026-01-01T00:00:00Z")
		if next, ok := spec.next(after, time.UTC); ok && !next.After(after) {
			t.Fatalf("%q: next %s is not after %s", expr, next, after)
		}
	})
}
