package main

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/deerflow/deerflow/channels"
)

// settle gives back to the operating system the memory that starting up
// used and no longer needs, once the server is idle for the first time:
// every channel connected, the built-in skills unpacked, the sandbox
// probed. Run it in its own goroutine after the channels start.
//
// Without it that memory stays resident: a fresh process's heap is below
// the collector's 4 MB minimum goal, so nothing is collected until the
// runtime's periodic collection two minutes in, and what that frees is
// kept for reuse (the runtime returns memory only above its goal).
// Start-up's garbage (the config and skill files parsed, the platforms'
// handshakes decoded, the packages' initialisation) and the stacks it grew
// are much of the idle heap. The saving is modest and fades as the idle
// server's keep-alives (long polls, pings) grow the heap back towards
// that goal: measured against the fakes, 0.1 to 0.2 MB of resident memory
// after start, 1 MB a minute in, 0.2 to 0.5 MB after a few minutes. GOGC
// and GOMEMLIMIT apply as usual.
func settle(ctx context.Context, a *app, chans []channels.Channel) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.NewTimer(2 * time.Second) // a platform that is down: settle anyway
	defer giveUp.Stop()
wait:
	for !connected(chans) {
		select {
		case <-ctx.Done():
			return
		case <-giveUp.C:
			break wait
		case <-tick.C:
		}
	}
	a.background() // unpacking the skills and probing bubblewrap, now that the channels are up
	select {
	case <-a.unpacked:
	case <-ctx.Done():
		return
	}
	a.sandbox.BashStatus() // returns once bubblewrap has been probed
	if ctx.Err() != nil {
		return
	}
	debug.FreeOSMemory()
	a.log.Debug("start-up settled: its garbage collected and the memory returned")
}

// connected reports whether every channel that knows its connection state
// is connected.
func connected(chans []channels.Channel) bool {
	for _, ch := range chans {
		if h, ok := ch.(channels.HealthReporter); ok && !h.Health().Connected {
			return false
		}
	}
	return true
}
