package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Schedule is when a task runs: exactly one of At (once), Every (a fixed
// interval from Anchor) or Cron (five fields in TZ).
type Schedule struct {
	At     time.Time `json:"at,omitzero"`
	Every  string    `json:"every,omitempty"`    // a Go duration: "90s", "30m", "24h"
	Anchor time.Time `json:"anchor,omitzero"`    // Every: its occurrences are Anchor + k·Every
	Cron   string    `json:"cron,omitempty"`     // "0 9 * * 1-5"
	TZ     string    `json:"timezone,omitempty"` // Cron's time zone (IANA name)
}

// Spec is a schedule as a person or the model writes it (the arguments of
// schedule_task and of the HTTP API).
type Spec struct {
	At       string `json:"at,omitempty"`
	Every    string `json:"every,omitempty"`
	Cron     string `json:"cron,omitempty"`
	Timezone string `json:"timezone,omitempty"`
}

// Limits are what a new schedule is checked against.
type Limits struct {
	MinInterval time.Duration // the shortest Every, and the shortest gap of a Cron
	Timezone    string        // a Cron's zone when the spec names none
}

// Parse checks a spec and returns its schedule; now anchors Every. Errors
// are sentences for the model or the person: what is wrong and what would
// be right.
func Parse(s Spec, lim Limits, now time.Time) (Schedule, error) {
	given := 0
	for _, v := range []string{s.At, s.Every, s.Cron} {
		if strings.TrimSpace(v) != "" {
			given++
		}
	}
	if given != 1 {
		return Schedule{}, errors.New("give exactly one of at (a time such as 2026-12-01T09:00:00+01:00), every (an interval such as 30m or 24h) or cron (five fields such as \"0 9 * * 1-5\")")
	}
	switch {
	case s.At != "":
		return parseAt(strings.TrimSpace(s.At), now)
	case s.Every != "":
		return parseEvery(strings.TrimSpace(s.Every), lim, now)
	}
	return parseCronSchedule(strings.TrimSpace(s.Cron), s.Timezone, lim, now)
}

func parseAt(text string, now time.Time) (Schedule, error) {
	at, err := time.Parse(time.RFC3339, text)
	if err != nil {
		return Schedule{}, fmt.Errorf("at %q is not an RFC 3339 time with its offset, such as 2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z", text)
	}
	if !at.After(now) {
		return Schedule{}, fmt.Errorf("at %s is in the past (it is now %s)", at.Format(time.RFC3339), now.In(at.Location()).Format(time.RFC3339))
	}
	return Schedule{At: at}, nil
}

func parseEvery(text string, lim Limits, now time.Time) (Schedule, error) {
	d, err := time.ParseDuration(text)
	if err != nil {
		return Schedule{}, fmt.Errorf("every %q is not a duration such as 90s, 30m or 24h", text)
	}
	if d < lim.MinInterval || d <= 0 {
		return Schedule{}, fmt.Errorf("every %s is too often: the shortest interval here is %s", text, lim.MinInterval)
	}
	return Schedule{Every: d.String(), Anchor: now.Truncate(time.Second)}, nil
}

func parseCronSchedule(expr, tz string, lim Limits, now time.Time) (Schedule, error) {
	tz = strings.TrimSpace(tz)
	if tz == "" {
		tz = lim.Timezone
	}
	loc, err := loadZone(tz)
	if err != nil {
		return Schedule{}, fmt.Errorf("timezone %q is not a known time zone; use an IANA name such as Europe/Berlin or America/New_York", tz)
	}
	spec, err := parseCron(expr)
	if err != nil {
		return Schedule{}, err
	}
	first, ok := spec.next(now, loc)
	if !ok {
		return Schedule{}, fmt.Errorf("cron %q never matches a date", expr)
	}
	if second, ok := spec.next(first, loc); ok && second.Sub(first) < lim.MinInterval {
		return Schedule{}, fmt.Errorf("cron %q runs too often: the shortest interval here is %s", expr, lim.MinInterval)
	}
	return Schedule{Cron: expr, TZ: tz}, nil
}

// loadZone is time.LoadLocation, with "" as UTC.
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	return time.LoadLocation(name)
}

// Recurring reports whether the schedule runs more than once.
func (s Schedule) Recurring() bool { return s.At.IsZero() }

// Next returns the first occurrence after `after`, or false when there is
// none (a one-shot already past, or a schedule that no longer parses).
func (s Schedule) Next(after time.Time) (time.Time, bool) {
	switch {
	case !s.At.IsZero():
		return s.At, s.At.After(after)
	case s.Every != "":
		d, err := time.ParseDuration(s.Every)
		if err != nil || d <= 0 {
			return time.Time{}, false
		}
		if after.Before(s.Anchor) {
			return s.Anchor, true
		}
		k := after.Sub(s.Anchor)/d + 1
		return s.Anchor.Add(k * d), true
	case s.Cron != "":
		spec, err := parseCron(s.Cron)
		if err != nil {
			return time.Time{}, false
		}
		loc, err := loadZone(s.TZ)
		if err != nil {
			return time.Time{}, false
		}
		return spec.next(after, loc)
	}
	return time.Time{}, false
}

// String describes the schedule for lists: "at 2026-12-01T09:00:00+01:00",
// "every 30m0s", "cron 0 9 * * 1-5 (Europe/Berlin)".
func (s Schedule) String() string {
	switch {
	case !s.At.IsZero():
		return "at " + s.At.Format(time.RFC3339)
	case s.Every != "":
		return "every " + s.Every
	}
	tz := s.TZ
	if tz == "" {
		tz = "UTC"
	}
	return fmt.Sprintf("cron %s (%s)", s.Cron, tz)
}
