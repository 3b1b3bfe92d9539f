package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// BenchmarkEndToEndFloor is BenchmarkEndToEnd on Telegram with
// internal/floorbot in deerflow's place: the least a bot can do (poll
// with go-telegram/bot, ask the model, send the answer; nothing stored,
// nothing checked). Its figures are the floor under deerflow's on this
// machine: the fake platform's and the fake model's share, the client
// library's, loopback HTTP's and the scheduler's.
func BenchmarkEndToEndFloor(b *testing.B) {
	b.Run("telegram", func(b *testing.B) {
		p := &platform{f: &fakes{model: fakeopenai.New(b)}, stamps: &modelStamps{at: map[string][2]time.Time{}}}
		url := timedModel(b, p.f.model, p.stamps)
		tg := faketelegram.New(b, "123456:TEST-token")
		p.telegram(tg)
		bin := filepath.Join(b.TempDir(), "floorbot")
		if out, err := exec.Command("go", "build", "-o", bin, "../../internal/floorbot").CombinedOutput(); err != nil {
			b.Fatalf("go build floorbot: %v\n%s", err, out)
		}
		cmd := exec.Command(bin, tg.URL, tg.Token, url)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { stopServeBinary(cmd) })
		p.pid = cmd.Process.Pid
		p.ready()
		p.turns(b, 50, 80*time.Millisecond)
	})
}

// cpuTime is the CPU time process pid has used so far, all its threads
// (schedstat: nanoseconds on a CPU).
func cpuTime(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum time.Duration
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		if f := strings.Fields(string(data)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}
