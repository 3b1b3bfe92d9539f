package metrics

import (
	"bytes"
	"errors"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// collectGo adds the commonly scraped part of client_golang's Go
// collector, under its names and meanings. Memory comes from
// runtime/metrics, which does not stop the world.
func collectGo(add func(family)) {
	add(gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())))

	s := []rtmetrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/total:bytes"},
	}
	rtmetrics.Read(s)
	v := func(i int) float64 {
		if s[i].Value.Kind() != rtmetrics.KindUint64 {
			return math.NaN()
		}
		return float64(s[i].Value.Uint64())
	}
	add(gauge("go_memstats_alloc_bytes",
		"Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", v(0)))
	add(gauge("go_memstats_heap_inuse_bytes",
		"Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", v(0)+v(1)))
	add(gauge("go_memstats_sys_bytes",
		"Number of bytes obtained from system. Equals to /memory/classes/total:byte.", v(2)))

	// Pause quantiles (min, 25%, 50%, 75%, max) over the recent pauses, as
	// client_golang reports them.
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	d := &distribution{label: "quantile", sum: gc.PauseTotal.Seconds(), count: uint64(gc.NumGC)}
	for i, q := range gc.PauseQuantiles {
		d.points = append(d.points, point{float64(i) / 4, q.Seconds()})
	}
	add(family{name: "go_gc_duration_seconds", typ: typeSummary,
		help:    "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.",
		samples: []sample{{dist: d}}})
}

var errBadProc = errors.New("metrics: unexpected /proc format")

// userHZ is the unit of times in /proc/self/stat: Linux reports them in
// 1/100 s whatever the kernel's tick (procfs assumes the same).
const userHZ = 100

// collectProcess adds client_golang's process collector metrics, read
// from /proc. Where /proc is not there (not Linux), a metric it cannot
// read is left out.
func collectProcess(add func(family)) {
	if st, err := readStat(); err == nil {
		add(family{name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.",
			typ: typeCounter, samples: []sample{{value: float64(st.utime+st.stime) / userHZ}}})
		add(gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", float64(st.vsize)))
		add(gauge("process_resident_memory_bytes", "Resident memory size in bytes.", float64(st.rss*os.Getpagesize())))
		if boot, err := bootTime(); err == nil {
			add(gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
				boot+float64(st.start)/userHZ))
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		// Less the one ReadDir had open on /proc/self/fd itself.
		add(gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds)-1)))
	}
	if n, err := maxFDs(); err == nil {
		add(gauge("process_max_fds", "Maximum number of open file descriptors.", n))
	}
}

// stat is what we read of /proc/self/stat.
type stat struct {
	utime, stime, start uint64 // clock ticks (userHZ)
	vsize               uint64 // bytes
	rss                 int    // pages
}

func readStat() (stat, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return stat{}, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing one, starting at field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, errBadProc
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return stat{}, errBadProc
	}
	var st stat
	var errs [5]error
	st.utime, errs[0] = strconv.ParseUint(f[11], 10, 64) // field 14
	st.stime, errs[1] = strconv.ParseUint(f[12], 10, 64) // field 15
	st.start, errs[2] = strconv.ParseUint(f[19], 10, 64) // field 22
	st.vsize, errs[3] = strconv.ParseUint(f[20], 10, 64) // field 23
	st.rss, errs[4] = strconv.Atoi(f[21])                // field 24
	for _, err := range errs {
		if err != nil {
			return stat{}, errBadProc
		}
	}
	return st, nil
}

// bootTime is when the system booted, in seconds since the epoch
// (/proc/stat's btime).
func bootTime() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, errBadProc
}

// maxFDs is the soft limit on open files (/proc/self/limits); unlimited
// is +Inf.
func maxFDs() (float64, error) {
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Max open files"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			if f[0] == "unlimited" {
				return math.Inf(1), nil
			}
			return strconv.ParseFloat(f[0], 64)
		}
	}
	return 0, errBadProc
}
