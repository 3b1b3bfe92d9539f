// Package channels defines what a chat channel is. Each platform adapter
// lives in a subpackage (telegram, slack, lark, console) and speaks only bus
// messages: it never imports agent.
package channels

import (
	"context"

	"github.com/deerflow/deerflow/bus"
)

// Channel connects one chat platform to the bus. Start receives messages
// and publishes them until ctx is done; Send (bus.Sender) delivers what the
// router sends back. Optional capabilities (bus.DeltaStreamer,
// bus.EditThrottler, ...) are found by type assertion.
type Channel interface {
	bus.Sender
	Start(ctx context.Context, b *bus.Bus) error
}
