package testutil

import (
	"bufio"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/metrics"
)

// RateLimitWaits is how many times channel's sends waited for a rate
// limit, read from m's /metrics; -1 when the series is missing.
func RateLimitWaits(tb testing.TB, m *metrics.Metrics, channel string) float64 {
	tb.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	series := `deerflow_rate_limit_waits_total{channel="` + channel + `"} `
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatalf("%s%s: %v", series, v, err)
			}
			return f
		}
	}
	return -1
}

// AssertSpaced checks that calls made one after another from start,
// answered at times, went no faster than perSecond in bursts of burst:
// call k (from 0) cannot be answered before start + (k-burst+1)/perSecond.
// It is a lower bound only (a slow machine makes calls later, never
// earlier), less 5 ms for the limiter's rounding.
func AssertSpaced(tb testing.TB, start time.Time, times []time.Time, perSecond float64, burst int) {
	tb.Helper()
	for k, at := range times {
		slots := max(k-max(burst, 1)+1, 0)
		earliest := time.Duration(float64(slots)/perSecond*float64(time.Second)) - 5*time.Millisecond
		if got := at.Sub(start); got < earliest {
			tb.Errorf("call %d answered %v after the first send; at %g/s in bursts of %d it cannot go before %v",
				k, got, perSecond, burst, earliest)
		}
	}
}
