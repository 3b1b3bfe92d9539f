package telegram

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/deerflow/deerflow/channels"
)

// limiter spaces the bot's calls the way Telegram asks: about one message
// a second per chat, twenty a minute per group, thirty a second overall,
// and nothing to a chat while a 429's retry_after runs.
type limiter struct {
	global *rate.Limiter

	mu     sync.Mutex
	chats  map[int64]*rate.Limiter
	paused map[int64]time.Time
}

func newLimiter() *limiter {
	return &limiter{
		global: rate.NewLimiter(30, 30),
		chats:  map[int64]*rate.Limiter{},
		paused: map[int64]time.Time{},
	}
}

func (l *limiter) chat(id int64) (*rate.Limiter, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.chats[id]
	if !ok {
		if id < 0 { // a group
			lim = rate.NewLimiter(rate.Every(3*time.Second), 4)
		} else {
			lim = rate.NewLimiter(rate.Every(time.Second), 4)
		}
		l.chats[id] = lim
	}
	return lim, l.paused[id]
}

// wait blocks until a call to chat may go out and returns how long it
// had to wait.
func (l *limiter) wait(ctx context.Context, chat int64) (time.Duration, error) {
	lim, until := l.chat(chat)
	var waited time.Duration
	if d := time.Until(until); d > 0 {
		if err := channels.Sleep(ctx, d, nil); err != nil {
			return waited, err
		}
		waited = d
	}
	d, err := channels.Wait(ctx, lim)
	waited += d
	if err != nil {
		return waited, err
	}
	d, err = channels.Wait(ctx, l.global)
	return waited + d, err
}

// pause holds calls to chat for d (Telegram's retry_after).
func (l *limiter) pause(chat int64, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := time.Now().Add(d); until.After(l.paused[chat]) {
		l.paused[chat] = until
	}
}
