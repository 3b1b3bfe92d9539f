// Package lark is the Feishu/Lark channel: events over the SDK's long
// connection, answers as interactive cards replied to the question and
// patched while they stream, conversations per p2p chat, per topic and per
// reply chain in groups, files both ways, allow-list and rate limits.
//
// It speaks only bus messages (never agent), through
// github.com/larksuite/oapi-sdk-go/v3 (pinned: the module proxy here
// refuses to list its versions).
package lark

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	lark "github.com/larksuite/oapi-sdk-go/v3"
	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	"github.com/larksuite/oapi-sdk-go/v3/event/dispatcher"
	"github.com/larksuite/oapi-sdk-go/v3/event/dispatcher/callback"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"
	larkws "github.com/larksuite/oapi-sdk-go/v3/ws"
	"golang.org/x/time/rate"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
)

// Name is the channel's name in conversation keys (lark:<chat>[:topic]).
const Name = "lark"

// reactTimeout bounds a reaction; it also ends when the channel stops.
const reactTimeout = 30 * time.Second

// Options configures a Channel.
type Options struct {
	// Name is the channel's name in chat keys, on bus messages, in logs
	// and metrics; "" → Name (lark). Each bot of a process has its own.
	Name string
	// Key is the config key path named in errors; "" → channels.lark.
	Key              string
	AppID, AppSecret string
	Domain           string   // https://open.feishu.cn or https://open.larksuite.com; a fake in tests
	AllowedUsers     []string // open_id or user_id
	Store            *store.Store
	Logger           *slog.Logger
	HTTPClient       *http.Client
	Metrics          *metrics.Metrics // nil: nothing is recorded
	// Limits spaces new messages per chat and every send and card patch
	// overall (see wait); the zero value is no limit of ours (Lark's
	// rate-limit reset is honoured regardless). PerGroupPerMinute is not
	// used.
	Limits channels.Limits
}

// Channel is a Feishu/Lark bot.
type Channel struct {
	o     Options
	log   *slog.Logger
	cli   *lark.Client
	bot   string // the bot's open_id
	allow map[string]bool
	met   *metrics.Channel
	link  channels.Link  // from the long connection's lifecycle callbacks
	tasks channels.Group // what Start owns: the connection, bot info, reactions, downloads

	throttle *channels.Throttle // per chat and overall: Options.Limits

	mu     sync.Mutex
	limits map[string]*rate.Limiter // per message: patches ≤ 5/s (Lark's own per-message limit)
	pause  channels.Pauses          // per chat: a rate limit's reset
}

// New returns a Channel. It makes no request until Start.
func New(o Options) (*Channel, error) {
	if o.AppID == "" || o.AppSecret == "" {
		return nil, errors.New("lark: app_id and app_secret are required")
	}
	o.Name, o.Key = cmp.Or(o.Name, Name), cmp.Or(o.Key, "channels."+Name)
	if o.Domain == "" {
		o.Domain = lark.FeishuBaseUrl
	}
	o.Domain = strings.TrimRight(o.Domain, "/")
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	c := &Channel{o: o, log: o.Logger.With("channel", o.Name), limits: map[string]*rate.Limiter{},
		throttle: channels.NewThrottle(o.Limits), met: o.Metrics.Channel(o.Name)}
	if len(o.AllowedUsers) > 0 {
		c.allow = map[string]bool{}
		for _, u := range o.AllowedUsers {
			c.allow[strings.TrimSpace(u)] = true
		}
	}
	c.cli = lark.NewClient(o.AppID, o.AppSecret,
		lark.WithOpenBaseUrl(o.Domain),
		lark.WithHttpClient(o.HTTPClient),
		lark.WithLogLevel(larkcore.LogLevelError),
		lark.WithReqTimeout(60*time.Second),
	)
	return c, nil
}

// Name implements bus.Sender.
func (c *Channel) Name() string { return c.o.Name }

// EditInterval implements bus.EditThrottler: one card patch a second, or
// as slowly as Options.Limits asks.
func (c *Channel) EditInterval(string) time.Duration { return c.o.Limits.EditInterval(false) }

// Start learns the bot's open_id, then receives events over the long
// connection until ctx ends (the SDK reconnects by itself). It returns
// once every goroutine it started (reactions included) has ended.
func (c *Channel) Start(ctx context.Context, b bus.Publisher) error {
	ctx = c.tasks.Begin(ctx)
	defer c.tasks.End()
	// The long connection does not need the bot's id, so both start at
	// once; events wait for the id (mentions are matched against it).
	ready := make(chan struct{})
	fatal := make(chan error, 1)
	c.tasks.Go(func(ctx context.Context) { c.fetchBot(ctx, ready, fatal) })
	d := dispatcher.NewEventDispatcher("", "").
		OnP2MessageReceiveV1(func(ctx context.Context, e *larkim.P2MessageReceiveV1) error {
			select {
			case <-ready:
			case <-ctx.Done():
				return ctx.Err()
			}
			return c.receive(ctx, b, e)
		}).
		OnP2CardActionTrigger(func(ctx context.Context, e *callback.CardActionTriggerEvent) (*callback.CardActionTriggerResponse, error) {
			return c.press(ctx, b, e)
		})
	ws := c.wsClient(d)
	done := make(chan error, 1)
	c.tasks.Go(func(ctx context.Context) { done <- ws.Start(ctx) })
	select {
	case err := <-fatal:
		return err // End stops the long connection and waits for it
	case err := <-done:
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%s: long connection stopped: %w (check %s.app_id and app_secret)", c.o.Name, err, c.o.Key)
	}
}

// fetchBot learns the bot's id, retrying with backoff, then closes
// ready; an error that retrying cannot fix goes to fatal.
func (c *Channel) fetchBot(ctx context.Context, ready chan<- struct{}, fatal chan<- error) {
	for delay := time.Second; ; delay = min(delay*2, 30*time.Second) {
		id, err := c.botInfo(ctx)
		if err == nil {
			c.bot = id
			close(ready)
			return
		}
		var fe *fatalError
		if errors.As(err, &fe) {
			fatal <- err
			return
		}
		c.log.Warn("bot info failed; retrying", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// wsClient is the long connection delivering events to d, reporting its
// state as the channel's health.
func (c *Channel) wsClient(d *dispatcher.EventDispatcher) *larkws.Client {
	return larkws.NewClient(c.o.AppID, c.o.AppSecret,
		larkws.WithEventHandler(d),
		larkws.WithDomain(c.o.Domain),
		larkws.WithLogLevel(larkcore.LogLevelError),
		larkws.WithAutoReconnect(true),
		larkws.WithOnReady(func() { c.link.Set(true, "long connection open") }),
		larkws.WithOnReconnected(func() { c.link.Set(true, "long connection open") }),
		larkws.WithOnReconnecting(func() { c.link.Set(false, "long connection lost; reconnecting") }),
		larkws.WithOnDisconnected(func() { c.link.Set(false, "long connection closed") }),
		larkws.WithOnError(func(error) {
			// The error may carry the connection URL (with its ticket):
			// only that it failed is reported.
			c.link.Set(false, "long connection failed; retrying")
			c.met.Error(metrics.ErrChannel)
		}),
	)
}

// Health implements channels.HealthReporter, from the long connection's
// lifecycle callbacks.
func (c *Channel) Health() channels.Health { return c.link.Health() }

type fatalError struct{ msg string }

func (e *fatalError) Error() string { return e.msg }

// botInfo asks who the bot is.
func (c *Channel) botInfo(ctx context.Context) (string, error) {
	resp, err := c.cli.Get(ctx, "/open-apis/bot/v3/info", nil, larkcore.AccessTokenTypeTenant)
	if err != nil {
		return "", err
	}
	var r struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
		Bot  struct {
			OpenID string `json:"open_id"`
		} `json:"bot"`
	}
	if err := json.Unmarshal(resp.RawBody, &r); err != nil {
		return "", fmt.Errorf("lark: bot info: %w", err)
	}
	switch {
	case r.Code == 10003 || r.Code == 10014 || r.Code == 99991663 || r.Code == 99991664:
		return "", &fatalError{fmt.Sprintf("%s: the app credentials were rejected (%s); check %s.app_id and app_secret", c.o.Name, r.Msg, c.o.Key)}
	case r.Code != 0:
		return "", fmt.Errorf("lark: bot info: %d %s", r.Code, r.Msg)
	case r.Bot.OpenID == "":
		return "", errors.New("lark: bot info has no open_id (is the Bot capability enabled?)")
	}
	return r.Bot.OpenID, nil
}

func (c *Channel) allowed(ids ...string) bool {
	if c.allow == nil {
		return true
	}
	for _, id := range ids {
		if id != "" && c.allow[id] {
			return true
		}
	}
	return false
}

// wait spaces a call into chat by Options.Limits (by default Lark's
// documented send limits: 5 QPS per user or group, about 1000 a minute
// per app), counting the wait; an empty chat (a card patch) waits for the
// overall limit only.
//
// Counted: new messages and replies (im/v1/messages, the calls Lark
// limits per user and per group), in the chat and overall; card patches
// overall, and per message by limiter (Lark allows 5 QPS per message).
// Not counted: reactions, image and file uploads, downloads.
func (c *Channel) wait(ctx context.Context, chat string) error {
	d, err := c.throttle.Wait(ctx, chat, false)
	c.met.RateLimitWait(d)
	return err
}

// limiter returns the patch limiter of one message.
func (c *Channel) limiter(messageID string) *rate.Limiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.limits[messageID]
	if !ok {
		if len(c.limits) > 4096 {
			clear(c.limits)
		}
		l = rate.NewLimiter(rate.Every(200*time.Millisecond), 2)
		c.limits[messageID] = l
	}
	return l
}
