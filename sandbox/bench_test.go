package sandbox

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/tools"
)

// BenchmarkBashTrue is one bash tool call of `true` under bubblewrap, end
// to end (budget: p50 ≤ 15 ms).
func BenchmarkBashTrue(b *testing.B) {
	m := newManager(b, Options{})
	needBwrap(b, m)
	benchTool(b, m, "bash", map[string]any{"command": "true"}, "(no output)")
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
