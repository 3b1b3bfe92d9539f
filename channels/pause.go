package channels

import (
	"context"
	"sync"
	"time"
)

// Pauses holds sends to a chat while a platform's rate limit (a 429's
// Retry-After, Telegram's retry_after, Lark's reset) runs, whichever send
// was refused: a dropped progress message makes the answer after it wait
// too. The zero value is ready.
type Pauses struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// Hold stops sends to chat for d (a longer hold already running stays).
func (p *Pauses) Hold(chat string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.until == nil {
		p.until = map[string]time.Time{}
	}
	now := time.Now()
	for k, end := range p.until { // forget the holds that are over
		if !end.After(now) {
			delete(p.until, k)
		}
	}
	if end := now.Add(d); end.After(p.until[chat]) {
		p.until[chat] = end
	}
}

// Wait blocks until sends to chat may go on, or ctx is done, and returns
// how long it waited.
func (p *Pauses) Wait(ctx context.Context, chat string) (time.Duration, error) {
	p.mu.Lock()
	d := time.Until(p.until[chat])
	p.mu.Unlock()
	if d <= 0 {
		return 0, nil
	}
	return d, Sleep(ctx, d, nil)
}

// Backoff is the wait before retry number attempt+1 of a send that met a
// platform's server error (a 5xx): short, since a person is waiting.
func Backoff(attempt int) time.Duration {
	return min(250*time.Millisecond<<attempt, 4*time.Second)
}
