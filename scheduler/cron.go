package scheduler

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// cronSpec is a parsed five-field cron expression: minute, hour, day of
// month, month, day of week, each a bit set of the values it matches.
//
// Written here rather than taken from a library so that what happens
// around daylight-saving changes is ours to state and test: a time that a
// spring-forward skips runs at the same distance after the change (02:30
// → 03:30), once; a time that a fall-back repeats runs once, at its first
// occurrence.
type cronSpec struct {
	minute, hour, dom, month, dow uint64
	// domStar and dowStar: the field was "*"; when both day fields are
	// restricted a day matching either runs (Vixie cron's rule).
	domStar, dowStar bool
}

type cronField struct {
	name     string
	min, max int
	names    []string // names[i] is value min+i ("jan"), when the field has names
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day of week", min: 0, max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

var cronMacros = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
	"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

// parseCron reads five standard fields ("0 9 * * 1-5") or a macro
// ("@daily"). Errors say which field is wrong and why.
func parseCron(expr string) (*cronSpec, error) {
	expr = strings.TrimSpace(expr)
	if m, ok := cronMacros[strings.ToLower(expr)]; ok {
		expr = m
	}
	parts := strings.Fields(expr)
	if len(parts) != 5 {
		return nil, fmt.Errorf("cron needs five fields (minute hour day-of-month month day-of-week, e.g. \"0 9 * * 1-5\"), got %d", len(parts))
	}
	var sets [5]uint64
	for i, p := range parts {
		set, err := cronFields[i].parse(p)
		if err != nil {
			return nil, fmt.Errorf("cron %s field %q: %w", cronFields[i].name, p, err)
		}
		sets[i] = set
	}
	if sets[4]&(1<<7) != 0 { // 7 is Sunday too
		sets[4] = sets[4]&^(1<<7) | 1
	}
	return &cronSpec{minute: sets[0], hour: sets[1], dom: sets[2], month: sets[3], dow: sets[4],
		domStar: parts[2] == "*", dowStar: parts[4] == "*"}, nil
}

// parse reads one field: a list of "*", "N", "A-B", each optionally "/STEP".
func (f cronField) parse(s string) (uint64, error) {
	var set uint64
	for item := range strings.SplitSeq(s, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("step %q must be a positive number", stepText)
			}
			step = n
		}
		lo, hi, err := f.bounds(rng, hasStep)
		if err != nil {
			return 0, err
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << v
		}
	}
	return set, nil
}

// bounds reads "*", "N" or "A-B". "N/step" means N through the maximum.
func (f cronField) bounds(s string, stepped bool) (lo, hi int, err error) {
	if s == "*" {
		return f.min, f.max, nil
	}
	a, b, isRange := strings.Cut(s, "-")
	if lo, err = f.value(a); err != nil {
		return 0, 0, err
	}
	hi = lo
	switch {
	case isRange:
		if hi, err = f.value(b); err != nil {
			return 0, 0, err
		}
		if hi < lo {
			return 0, 0, fmt.Errorf("range %s goes backwards", s)
		}
	case stepped:
		hi = f.max
	}
	return lo, hi, nil
}

func (f cronField) value(s string) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("expected a number, *, a range A-B, a list A,B or a step */N")
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("%d is outside %d-%d", n, f.min, f.max)
	}
	return n, nil
}

// dayMatches applies the day-of-month and day-of-week fields.
func (c *cronSpec) dayMatches(t time.Time) bool {
	dom := c.dom&(1<<t.Day()) != 0
	dow := c.dow&(1<<int(t.Weekday())) != 0
	if c.domStar || c.dowStar {
		return dom && dow
	}
	return dom || dow
}

// maxCronDays bounds the search for the next matching day: the rarest
// valid expression ("0 0 29 2 1", a Monday 29 February, or either) still
// matches within years, and an impossible one ("0 0 31 2 *") never does.
const maxCronDays = 366 * 8

// next returns the first time after `after` that the expression matches
// in loc, or false when it never does.
func (c *cronSpec) next(after time.Time, loc *time.Location) (time.Time, bool) {
	local := after.In(loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	for i := 0; i < maxCronDays; i++ {
		d := time.Date(day.Year(), day.Month(), day.Day()+i, 12, 0, 0, 0, loc) // noon: never in a gap
		if c.month&(1<<int(d.Month())) == 0 || !c.dayMatches(d) {
			continue
		}
		if t, ok := c.firstInDay(d, after, loc); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// firstInDay returns the earliest matching instant of day d after
// `after`. A wall time the clocks skip comes out shifted past the change;
// of two that land on the same instant, or a wall time the clocks repeat,
// it is counted once.
func (c *cronSpec) firstInDay(d, after time.Time, loc *time.Location) (time.Time, bool) {
	var best time.Time
	for h := range bits.Len64(c.hour) {
		if c.hour&(1<<h) == 0 {
			continue
		}
		for m := range bits.Len64(c.minute) {
			if c.minute&(1<<m) == 0 {
				continue
			}
			t := wallTime(d, h, m, loc)
			if t.After(after) && (best.IsZero() || t.Before(best)) {
				best = t
			}
		}
	}
	return best, !best.IsZero()
}

// wallTime is h:m on day d in loc. A wall time that a spring-forward skips
// is read with the offset from before the change, which puts it as far
// past the change as it was meant to be after its start (02:30 → 03:30).
// (time.Date leaves the choice open; it reads 02:30 as 01:30.)
func wallTime(d time.Time, h, m int, loc *time.Location) time.Time {
	t := time.Date(d.Year(), d.Month(), d.Day(), h, m, 0, 0, loc)
	if t.Hour() == h && t.Minute() == m {
		return t
	}
	_, before := t.Add(-3 * time.Hour).Zone()
	_, after := t.Add(3 * time.Hour).Zone()
	off := min(before, after) // spring-forward raises the offset
	return time.Date(d.Year(), d.Month(), d.Day(), h, m, 0, 0, time.FixedZone("", off)).In(loc)
}
