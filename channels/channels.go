// Package channels defines what a chat channel is. Each platform adapter
// lives in a subpackage (telegram, slack, lark, console) and speaks only bus
// messages: it never imports agent.
package channels

import (
	"context"
	"sync"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/metrics"
)

// Channel connects one chat platform to the router. Start receives
// messages and publishes them (bus.Publisher) until ctx is done; Send
// (bus.Sender) delivers what the router sends back. Optional capabilities (bus.DeltaStreamer,
// bus.EditThrottler, HealthReporter, ...) are found by type assertion.
type Channel interface {
	bus.Sender
	Start(ctx context.Context, b bus.Publisher) error
}

// HealthReporter is a channel that knows whether it is connected to its
// platform (for /healthz).
type HealthReporter interface {
	Health() Health
}

// Health is a channel's connection to its platform.
type Health struct {
	Connected bool
	// Detail says what the channel is doing ("polling", "reconnecting",
	// "getUpdates failed: HTTP 502"). It never holds a token.
	Detail string
	Since  time.Time // when Connected last changed
}

// Link keeps a channel's Health; adapters embed one and call Set as their
// connection comes and goes. The zero Link is "connecting", not connected.
type Link struct {
	mu sync.Mutex
	h  Health
}

// Set records the connection state; Since moves only when connected
// changes.
func (l *Link) Set(connected bool, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if connected != l.h.Connected || l.h.Since.IsZero() {
		l.h.Since = time.Now()
	}
	l.h.Connected, l.h.Detail = connected, detail
}

// Health implements HealthReporter.
func (l *Link) Health() Health {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.h
	if h.Detail == "" && !h.Connected {
		h.Detail = "connecting"
	}
	return h
}

// SendKind is the metrics kind of what out asks a platform to do, or ""
// for what is not a delivery of its own (text deltas, activity lines).
func SendKind(out *bus.Outbound) string {
	switch out.Kind {
	case bus.OutMessage:
		return metrics.SendMessage
	case bus.OutEdit:
		return metrics.SendEdit
	case bus.OutFile:
		return metrics.SendFile
	}
	return ""
}
