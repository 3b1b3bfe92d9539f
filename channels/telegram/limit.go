package telegram

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/deerflow/deerflow/channels"
)

// limiter spaces the bot's calls by Options.Limits (by default what
// Telegram's Bot FAQ asks: about one message a second per chat, twenty a
// minute per group, thirty a second overall), and holds every call to a
// chat while a 429's retry_after runs (Telegram's own, always honoured).
//
// Counted, as Telegram counts them: sendMessage, editMessageText,
// sendPhoto and sendDocument. Not counted: sendChatAction (typing),
// setMyCommands, getUpdates, getFile and downloads.
type limiter struct {
	th *channels.Throttle

	mu     sync.Mutex
	paused map[int64]time.Time
}

func newLimiter(l channels.Limits) *limiter {
	return &limiter{th: channels.NewThrottle(l), paused: map[int64]time.Time{}}
}

// wait blocks until a call to chat may go out and returns how long it
// had to wait.
func (l *limiter) wait(ctx context.Context, chat int64) (time.Duration, error) {
	l.mu.Lock()
	until := l.paused[chat]
	l.mu.Unlock()
	var waited time.Duration
	if d := time.Until(until); d > 0 {
		if err := channels.Sleep(ctx, d, nil); err != nil {
			return waited, err
		}
		waited = d
	}
	d, err := l.th.Wait(ctx, strconv.FormatInt(chat, 10), chat < 0)
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
