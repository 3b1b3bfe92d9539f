package channels

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// Wait blocks until lim allows one more call, like lim.Wait, and returns
// how long it had to wait (0 when a token was free, or when ctx ended
// first), for the rate-limit metrics.
func Wait(ctx context.Context, lim *rate.Limiter) (time.Duration, error) {
	r := lim.Reserve()
	if !r.OK() {
		return 0, fmt.Errorf("rate: burst of %d cannot allow a call", lim.Burst())
	}
	d := r.Delay()
	if d <= 0 {
		return 0, nil
	}
	if err := Sleep(ctx, d, r.Cancel); err != nil {
		return 0, err
	}
	return d, nil
}

// Sleep waits d or until ctx is done, then calling cancel (when set) and
// returning ctx's error.
func Sleep(ctx context.Context, d time.Duration, cancel func()) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		if cancel != nil {
			cancel()
		}
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
