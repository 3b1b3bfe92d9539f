package channels

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits is how fast a channel lets itself call its platform: limits of
// our own, kept below the platform's so that its 429s stay rare. The
// platform's own answer (a 429's Retry-After) is honoured on top of them
// (see Pauses). A zero rate is no limit of ours on that dimension. Which
// calls count is each adapter's to say (sends and edits; never typing).
type Limits struct {
	PerChatPerSecond float64 // calls into one chat (a DM, group or channel)
	// PerChatBurst is how many calls into one chat may go at once before
	// the spacing starts; 0 is 1 (no burst).
	PerChatBurst int
	// PerGroupPerMinute bounds calls into one group chat, on top of the
	// per-chat limit (Telegram only; its bursts are PerChatBurst).
	PerGroupPerMinute float64
	// GlobalPerSecond bounds calls across every chat; its burst is the
	// same number (rounded up).
	GlobalPerSecond float64
}

// EditInterval is how often a streamed answer may be edited in a chat
// (a group when group is set): once a second, or slower when the limits
// allow fewer calls.
func (l Limits) EditInterval(group bool) time.Duration {
	d := time.Second
	if l.PerChatPerSecond > 0 {
		d = max(d, time.Duration(float64(time.Second)/l.PerChatPerSecond))
	}
	if group && l.PerGroupPerMinute > 0 {
		d = max(d, time.Duration(float64(time.Minute)/l.PerGroupPerMinute))
	}
	return d
}

// newLimiter allows perSecond calls a second in bursts of burst; nil when
// perSecond is not positive (no limit).
func newLimiter(perSecond float64, burst int) *rate.Limiter {
	if perSecond <= 0 || math.IsNaN(perSecond) {
		return nil
	}
	return rate.NewLimiter(rate.Limit(perSecond), max(burst, 1))
}

// maxIdle is how many chats' limiters a Throttle keeps before it forgets
// the idle ones (a full bucket: forgetting it changes nothing).
const maxIdle = 4096

// Throttle spaces one channel's calls by its Limits: a limiter per chat
// and per group, made on first use, and one across all chats. A chat with
// no limit gets no limiter. Use NewThrottle.
type Throttle struct {
	l      Limits
	global *rate.Limiter // nil: no global limit

	mu     sync.Mutex
	chats  map[string]*rate.Limiter
	groups map[string]*rate.Limiter
}

// NewThrottle returns a Throttle keeping to l.
func NewThrottle(l Limits) *Throttle {
	return &Throttle{
		l:      l,
		global: newLimiter(l.GlobalPerSecond, int(math.Ceil(l.GlobalPerSecond))),
		chats:  map[string]*rate.Limiter{},
		groups: map[string]*rate.Limiter{},
	}
}

// Limits returns what t keeps to.
func (t *Throttle) Limits() Limits { return t.l }

// Wait blocks until one more call into chat (a group when group is set)
// may go, and returns how long it waited. An empty chat waits for the
// global limit only.
func (t *Throttle) Wait(ctx context.Context, chat string, group bool) (time.Duration, error) {
	var waited time.Duration
	for _, lim := range t.limiters(chat, group) {
		d, err := Wait(ctx, lim)
		waited += d
		if err != nil {
			return waited, err
		}
	}
	return waited, nil
}

// limiters are the limiters a call into chat passes, the chat's first.
func (t *Throttle) limiters(chat string, group bool) []*rate.Limiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*rate.Limiter
	if chat != "" {
		out = appendLimiter(out, t.chats, chat, t.l.PerChatPerSecond, t.l.PerChatBurst)
		if group {
			out = appendLimiter(out, t.groups, chat, t.l.PerGroupPerMinute/60, t.l.PerChatBurst)
		}
	}
	if t.global != nil {
		out = append(out, t.global)
	}
	return out
}

// appendLimiter appends chat's limiter from m, making it when it is
// missing, unless perSecond is no limit.
func appendLimiter(out []*rate.Limiter, m map[string]*rate.Limiter, chat string, perSecond float64, burst int) []*rate.Limiter {
	if perSecond <= 0 {
		return out
	}
	lim, ok := m[chat]
	if !ok {
		if len(m) >= maxIdle {
			forgetIdle(m)
		}
		lim = newLimiter(perSecond, burst)
		m[chat] = lim
	}
	return append(out, lim)
}

// forgetIdle drops the limiters whose bucket is full again.
func forgetIdle(m map[string]*rate.Limiter) {
	now := time.Now()
	for k, lim := range m {
		if lim.TokensAt(now) >= float64(lim.Burst()) {
			delete(m, k)
		}
	}
}
