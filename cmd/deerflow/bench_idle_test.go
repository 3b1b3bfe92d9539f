package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// BenchmarkServeStartup starts the built binary (`deerflow serve` pointed
// at the fakes) with Telegram alone (telegram) and with Telegram, Slack
// and Lark (all), and reports the time until every enabled platform is
// connected (first getUpdates; Socket Mode and the Lark long connection
// accepted) and its resident memory once idle (idle-MB, VmRSS), with its
// anonymous (heap, stacks) and file-backed (the binary's pages) parts.
// Budgets: all connected ≤ 15 ms; idle ≤ 12 MB with Telegram alone,
// ≤ 15 MB with all three.
func BenchmarkServeStartup(b *testing.B) {
	b.Run("telegram", func(b *testing.B) {
		serveStartup(b, &fakes{model: fakeopenai.New(b), tg: faketelegram.New(b, "123456:TEST-token")})
	})
	all := func(b *testing.B) *fakes {
		return &fakes{model: fakeopenai.New(b), tg: faketelegram.New(b, "123456:TEST-token"), sl: fakeslack.New(b), lk: fakelark.New(b)}
	}
	b.Run("all", func(b *testing.B) { serveStartup(b, all(b)) })
	b.Run("all-restart", func(b *testing.B) { serveRestart(b, all(b)) })
}

// serveRestart is serveStartup in one directory, started once before the
// clock: each start opens the database the one before left, as a restart
// or a deploy does. It reports start → connected only.
func serveRestart(b *testing.B, f *fakes) {
	serveBinary(b)
	dir := b.TempDir()
	before := f.connections()
	first := runServeBinaryIn(b, f, dir)
	f.waitConnected(before)
	stopServeBinary(first)
	var lat []time.Duration
	for b.Loop() {
		before := f.connections()
		start := time.Now()
		cmd := runServeBinaryIn(b, f, dir)
		f.waitConnected(before)
		lat = append(lat, time.Since(start))
		stopServeBinary(cmd)
	}
	reportPercentiles(b, lat)
}

// serveStartup starts `deerflow serve` against f once per iteration and
// reports start → connected and the idle memory.
func serveStartup(b *testing.B, f *fakes) {
	serveBinary(b) // built before the clock starts
	var lat []time.Duration
	var rss, anon, file []int
	for b.Loop() {
		before := f.connections()
		start := time.Now()
		cmd := runServeBinary(b, f)
		f.waitConnected(before)
		lat = append(lat, time.Since(start))
		// Idle: every channel connected, the start-up's background work
		// (skills unpacked, sandbox probed) done and its garbage returned
		// (see settle in runtime.go). A pause, not a timing assertion.
		time.Sleep(300 * time.Millisecond)
		st := procStatus(cmd.Process.Pid)
		rss, anon, file = append(rss, st["VmRSS"]), append(anon, st["RssAnon"]), append(file, st["RssFile"])
		stopServeBinary(cmd)
	}
	reportPercentiles(b, lat)
	b.ReportMetric(median(rss)/1024, "idle-MB")
	b.ReportMetric(median(anon)/1024, "anon-MB")
	b.ReportMetric(median(file)/1024, "file-MB")
}

// procStatus returns the KiB figures of /proc/<pid>/status (VmRSS,
// RssAnon, RssFile, ...).
func procStatus(pid int) map[string]int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	out := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == "kB" {
			n, _ := strconv.Atoi(f[1])
			out[strings.TrimSuffix(f[0], ":")] = n
		}
	}
	return out
}

func median(v []int) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return float64(s[len(s)/2])
}
