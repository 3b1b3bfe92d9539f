package metrics

import (
	"bytes"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// contentType is the Prometheus text exposition format, version 0.0.4.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// family is one metric family as a scrape sees it.
type family struct {
	name, help, typ string
	labels          []string // label names, in the order they are written
	samples         []sample
}

// sample is one series of a family: a value, or a distribution for
// histograms and summaries.
type sample struct {
	values []string // label values, one per family label
	value  float64
	dist   *distribution
}

// distribution is a histogram's cumulative buckets or a summary's
// quantiles, with their sum and count.
type distribution struct {
	label  string // "le" or "quantile"
	points []point
	sum    float64
	count  uint64
}

// point is one bucket (upper bound, cumulative count) or quantile
// (quantile, value).
type point struct{ at, v float64 }

// collector adds the families it has now; a family without samples is
// left out of the exposition.
type collector func(add func(family))

// handler serves the families of collectors in the text format.
type handler []collector

func (h handler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	var fams []family
	for _, c := range h {
		c(func(f family) { fams = append(fams, f) })
	}
	var b bytes.Buffer
	writeText(&b, fams)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	_, _ = w.Write(b.Bytes())
}

// writeText writes fams sorted by name, each family's samples sorted by
// label values.
func writeText(b *bytes.Buffer, fams []family) {
	slices.SortFunc(fams, func(x, y family) int { return strings.Compare(x.name, y.name) })
	for _, f := range fams {
		if len(f.samples) == 0 {
			continue
		}
		slices.SortFunc(f.samples, func(x, y sample) int { return slices.Compare(x.values, y.values) })
		b.WriteString("# HELP " + f.name + " ")
		escape(b, f.help, false)
		b.WriteString("\n# TYPE " + f.name + " " + f.typ + "\n")
		for _, s := range f.samples {
			if s.dist == nil {
				writeSample(b, f.name, f.labels, s.values, "", 0, s.value)
				continue
			}
			name := f.name
			if f.typ == typeHistogram {
				name += "_bucket"
			}
			for _, p := range s.dist.points {
				writeSample(b, name, f.labels, s.values, s.dist.label, p.at, p.v)
			}
			writeSample(b, f.name+"_sum", f.labels, s.values, "", 0, s.dist.sum)
			writeSample(b, f.name+"_count", f.labels, s.values, "", 0, float64(s.dist.count))
		}
	}
}

// writeSample writes one line: name{labels} value, with an extra label
// (le, quantile) when extra is not empty.
func writeSample(b *bytes.Buffer, name string, labels, values []string, extra string, at, v float64) {
	b.WriteString(name)
	if len(labels) > 0 || extra != "" {
		b.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l + `="`)
			escape(b, values[i], true)
			b.WriteByte('"')
		}
		if extra != "" {
			if len(labels) > 0 {
				b.WriteByte(',')
			}
			b.WriteString(extra + `="`)
			writeFloat(b, at)
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	writeFloat(b, v)
	b.WriteByte('\n')
}

// escape writes s escaped as the format asks: backslash and newline
// always, the double quote too in a label value.
func escape(b *bytes.Buffer, s string, quote bool) {
	for i := 0; i < len(s); i++ { // bytes: the escaped ones are ASCII
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '"' && quote:
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
}

func writeFloat(b *bytes.Buffer, v float64) {
	switch {
	case math.IsInf(v, 1):
		b.WriteString("+Inf")
	case math.IsInf(v, -1):
		b.WriteString("-Inf")
	case math.IsNaN(v):
		b.WriteString("NaN")
	default:
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), v, 'g', -1, 64))
	}
}
