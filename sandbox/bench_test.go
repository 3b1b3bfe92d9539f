package sandbox

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/sandbox/limit"
	"github.com/deerflow/deerflow/tools"
)

// BenchmarkBashTrue is one bash tool call of `true` under bubblewrap, end
// to end, layer by layer: the bare sandbox, with the default limits
// (a cgroup, or rlimits), and with the default public-only network too
// (slirp4netns and the nftables rules), which is what a user gets
// (budget: p50 ≤ 25 ms).
func BenchmarkBashTrue(b *testing.B) {
	defaults := limit.Limits{MemoryMB: 1024, Processes: 256, DiskMB: 2048, TmpMB: 256}
	for _, bc := range []struct {
		name string
		o    Options
	}{
		{"bare", Options{}},
		{"limits", Options{Limits: defaults}},
		{"limits+network", Options{Limits: defaults, Network: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := newManager(b, bc.o)
			needBwrap(b, m)
			if ok, how := m.NetworkStatus(); !ok {
				b.Fatalf("network: %s", how)
			}
			benchTool(b, m, "bash", map[string]any{"command": "true"}, "(no output)")
		})
	}
}

// BenchmarkReadFile1MB is read_file of a 1 MB text file (budget: ≤ 5 ms).
func BenchmarkReadFile1MB(b *testing.B) {
	m := newManager(b, Options{})
	line := strings.Repeat("abcdefghij", 9) + "\n" // 91 bytes
	writeHost(b, filepath.Join(hostDir(b, m, "t", "workspace"), "big.txt"), strings.Repeat(line, (1<<20)/len(line)))
	benchTool(b, m, "read_file", map[string]any{"path": "big.txt"}, "")
}

// benchTool calls a tool b.N times and reports p50 and p99 latency.
func benchTool(b *testing.B, m *Manager, name string, args any, want string) {
	raw, _ := json.Marshal(args)
	reg := tools.NewRegistry(m.Tools()...)
	ctx := tools.WithEnv(context.Background(), &tools.Env{ThreadID: "t"})
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		out, err := reg.Call(ctx, name, raw)
		lat = append(lat, time.Since(start))
		if err != nil || (want != "" && out != want) {
			b.Fatalf("%s = %q, %v", name, out, err)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
