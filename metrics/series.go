package metrics

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"
)

// Metric types, as the text format's # TYPE line names them.
const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
	typeSummary   = "summary"
)

// maxLabels is the most labels a series of ours carries; a fixed-size key
// lets a lookup by label values run without allocating.
const maxLabels = 3

// labelKey holds a series' label values, unused ones empty.
type labelKey [maxLabels]string

// counter is a float counter that only goes up.
type counter struct{ bits atomic.Uint64 }

func (c *counter) Inc() { c.Add(1) }

func (c *counter) Add(v float64) {
	for {
		old := c.bits.Load()
		if c.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

func (c *counter) value() float64 { return math.Float64frombits(c.bits.Load()) }

// histogram counts observations into fixed buckets. A mutex, not atomics,
// so that a scrape sees buckets, sum and count of the same observations.
type histogram struct {
	bounds []float64 // upper bounds, ascending; +Inf is implied

	mu     sync.Mutex
	counts []uint64 // per bucket (not cumulative), the last one +Inf
	sum    float64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // the first bound ≥ v: "le"
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.mu.Unlock()
}

// snapshot returns the cumulative buckets, +Inf last.
func (h *histogram) snapshot() *distribution {
	d := &distribution{label: "le", points: make([]point, len(h.counts))}
	h.mu.Lock()
	defer h.mu.Unlock()
	var n uint64
	for i, c := range h.counts {
		n += c
		bound := math.Inf(1)
		if i < len(h.bounds) {
			bound = h.bounds[i]
		}
		d.points[i] = point{bound, float64(n)}
	}
	d.sum, d.count = h.sum, n
	return d
}

// vec is a metric family with fixed label names whose series are made on
// first use and kept: label values are bounded by design.
type vec[T any] struct {
	name, help, typ string
	labels          []string
	make            func() *T
	read            func(*T) sample

	mu     sync.RWMutex
	series map[labelKey]*T
}

func newVec[T any](name, help, typ string, labels []string, mk func() *T, read func(*T) sample) *vec[T] {
	if len(labels) > maxLabels {
		panic("metrics: " + name + " has more than 3 labels")
	}
	return &vec[T]{name: name, help: help, typ: typ, labels: labels, make: mk, read: read, series: map[labelKey]*T{}}
}

// with returns the series with these label values (as many as labels),
// making it at zero the first time.
func (v *vec[T]) with(values ...string) *T {
	var k labelKey
	copy(k[:], values)
	v.mu.RLock()
	s, ok := v.series[k]
	v.mu.RUnlock()
	if ok {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.series[k]; ok {
		return s
	}
	s = v.make()
	v.series[k] = s
	return s
}

func (v *vec[T]) collect(add func(family)) {
	f := family{name: v.name, help: v.help, typ: v.typ, labels: v.labels}
	v.mu.RLock()
	for k, s := range v.series {
		smp := v.read(s)
		smp.values = k[:len(v.labels)]
		f.samples = append(f.samples, smp)
	}
	v.mu.RUnlock()
	add(f)
}

func newCounterVec(name, help string, labels ...string) *vec[counter] {
	return newVec(name, help, typeCounter, labels,
		func() *counter { return new(counter) },
		func(c *counter) sample { return sample{value: c.value()} })
}

func newHistogramVec(name, help string, bounds []float64, labels ...string) *vec[histogram] {
	return newVec(name, help, typeHistogram, labels,
		func() *histogram { return newHistogram(bounds) },
		func(h *histogram) sample { return sample{dist: h.snapshot()} })
}

// funcGauges are gauges read from one callback at scrape time. They are
// absent until the callback is set (so a number nobody provides is not
// shown as 0), and the callback can be replaced.
type funcGauges struct {
	gauges []gaugeSpec
	f      atomic.Pointer[func(i int) float64]
}

// gaugeSpec names one gauge of a funcGauges.
type gaugeSpec struct{ name, help string }

func (g *funcGauges) set(f func(i int) float64) { g.f.Store(&f) }

func (g *funcGauges) collect(add func(family)) {
	f := g.f.Load()
	if f == nil {
		return
	}
	for i, s := range g.gauges {
		add(gauge(s.name, s.help, (*f)(i)))
	}
}

// gauge is a family of one unlabelled gauge sample.
func gauge(name, help string, v float64) family {
	return family{name: name, help: help, typ: typeGauge, samples: []sample{{value: v}}}
}
