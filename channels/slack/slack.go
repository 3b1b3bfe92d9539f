// Package slack is the Slack channel over Socket Mode: mentions in
// channels and group DMs (mpim), and direct messages, start conversations
// keyed by their thread, later messages in the thread continue them,
// commands come as /deerflow <command> or "@bot /<command>" (see
// slash.go), answers stream into the thread with chat.update and finish
// as markdown blocks, with reactions for feedback, files both ways,
// allow-list and rate limits.
//
// It speaks only bus messages (never agent), through
// github.com/slack-go/slack and its socketmode package.
package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
)

// Name is the channel's name in conversation keys (slack:<channel>:<thread>).
const Name = "slack"

// How long a reaction, and an envelope's ack, may take; each also ends
// when the channel stops.
const (
	reactTimeout = 30 * time.Second
	ackTimeout   = 10 * time.Second
)

// Options configures a Channel.
type Options struct {
	// Name is the channel's name in chat keys, on bus messages, in logs
	// and metrics; "" → Name (slack). Each bot of a process has its own.
	Name string
	// Key is the config key path named in errors; "" → channels.slack.
	Key          string
	BotToken     string // xoxb-
	AppToken     string // xapp-, for Socket Mode
	APIURL       string // Web API base ending in /; a fake in tests
	AllowedUsers []string
	Store        *store.Store // to tell whether a thread is one of our conversations
	Logger       *slog.Logger
	HTTPClient   *http.Client
	Metrics      *metrics.Metrics // nil: nothing is recorded
	// Limits spaces posts and updates per channel or DM (see wait); the
	// zero value is no limit of ours (a 429's Retry-After is honoured
	// regardless). PerGroupPerMinute is not used.
	Limits channels.Limits
}

// Channel is a Slack app in Socket Mode.
type Channel struct {
	o   Options
	log *slog.Logger
	api *slack.Client
	sm  *socketmode.Client

	botUser, botID string
	botName        string // the bot's user name, for "@name /stop" in help
	allow          map[string]bool
	met            *metrics.Channel
	link           channels.Link  // from Socket Mode's connection events
	tasks          channels.Group // what Start owns: the connection, auth, reactions, acks, downloads
	lanes          channels.Lanes // messages being accepted, per chat, on tasks

	mu        sync.Mutex
	throttle  *channels.Throttle       // per channel and overall: Options.Limits
	pause     channels.Pauses          // per channel: a 429's Retry-After
	noStatus  bool                     // assistant.threads.setStatus is not available here
	reactions map[string]bool          // channel/ts with our "eyes" on it
	eyesDone  map[string]chan struct{} // channel/ts → closed once its "eyes" landed or failed
	// latestTopic is each person's latest conversation per channel
	// (channel/user → thread ts), which /deerflow commands address.
	latestTopic map[string]string
}

// New returns a Channel. It makes no request until Start.
func New(o Options) (*Channel, error) {
	if o.BotToken == "" || o.AppToken == "" {
		return nil, errors.New("slack: bot_token and app_token are required")
	}
	o.Name, o.Key = cmp.Or(o.Name, Name), cmp.Or(o.Key, "channels."+Name)
	if o.APIURL == "" {
		o.APIURL = "https://slack.com/api/"
	}
	if !strings.HasSuffix(o.APIURL, "/") {
		o.APIURL += "/"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	c := &Channel{
		o:         o,
		log:       o.Logger.With("channel", o.Name),
		throttle:  channels.NewThrottle(o.Limits),
		reactions: map[string]bool{},
		eyesDone:  map[string]chan struct{}{},
		met:       o.Metrics.Channel(o.Name),
	}
	if len(o.AllowedUsers) > 0 {
		c.allow = map[string]bool{}
		for _, u := range o.AllowedUsers {
			c.allow[strings.TrimSpace(u)] = true
		}
	}
	c.api = slack.New(o.BotToken,
		slack.OptionAppLevelToken(o.AppToken),
		slack.OptionAPIURL(o.APIURL),
		slack.OptionHTTPClient(o.HTTPClient),
	)
	c.sm = socketmode.New(c.api)
	return c, nil
}

// Name implements bus.Sender.
func (c *Channel) Name() string { return c.o.Name }

// EditInterval implements bus.EditThrottler: chat.update at most once a
// second per message, or as slowly as Options.Limits asks.
func (c *Channel) EditInterval(string) time.Duration { return c.o.Limits.EditInterval(false) }

// Start learns the bot's ids (auth.test), connects Socket Mode and handles
// envelopes until ctx ends. A rejected token is fatal. It returns once
// every goroutine it started (reactions and downloads included) has ended.
func (c *Channel) Start(ctx context.Context, b bus.Publisher) error {
	ctx = c.tasks.Begin(ctx)
	defer c.tasks.End()
	// Socket Mode connects while auth.test tells us who we are; events
	// wait for the answer (our own messages are recognised by it).
	authed := make(chan error, 1)
	c.tasks.Go(func(ctx context.Context) { authed <- c.auth(ctx) })
	runErr := make(chan error, 1)
	c.tasks.Go(func(ctx context.Context) { runErr <- c.sm.RunContext(ctx) })
	select {
	case <-ctx.Done():
		return nil
	case err := <-authed:
		if err != nil {
			return err
		}
	}
	c.log.Info("slack connected", "bot_user", c.botUser)
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-runErr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%s: socket mode stopped: %w (check %s.app_token)", c.o.Name, err, c.o.Key)
		case evt := <-c.sm.Events:
			c.connection(evt)
			c.event(ctx, b, evt)
		}
	}
}

// Health implements channels.HealthReporter, from Socket Mode's
// connection events.
func (c *Channel) Health() channels.Health { return c.link.Health() }

// connection follows the Socket Mode connection through its events.
func (c *Channel) connection(evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		c.link.Set(false, "connecting")
	case socketmode.EventTypeConnected, socketmode.EventTypeHello:
		c.link.Set(true, "socket mode connected")
	case socketmode.EventTypeConnectionError:
		detail := "connection failed; retrying"
		if e, ok := evt.Data.(*slack.ConnectionErrorEvent); ok {
			var sc slack.StatusCodeError
			if errors.As(e.ErrorObj, &sc) {
				detail = fmt.Sprintf("connection failed (HTTP %d); retrying", sc.Code)
			}
		}
		c.link.Set(false, detail)
		c.met.Error(metrics.ErrChannel)
	case socketmode.EventTypeInvalidAuth:
		c.link.Set(false, "the app token was rejected")
		c.met.Error(metrics.ErrChannel)
	case socketmode.EventTypeDisconnect:
		c.link.Set(false, "disconnected by Slack; reconnecting")
	}
}

// auth learns the bot's ids with auth.test, retrying transient failures;
// a rejected token is fatal.
func (c *Channel) auth(ctx context.Context) error {
	for delay := time.Second; ; delay = min(delay*2, 30*time.Second) {
		auth, err := c.api.AuthTestContext(ctx)
		if err == nil {
			c.botUser, c.botID, c.botName = auth.UserID, auth.BotID, auth.User
			return nil
		}
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && (se.Err == "invalid_auth" || se.Err == "not_authed" || se.Err == "token_revoked" || se.Err == "account_inactive") {
			return fmt.Errorf("%s: the bot token was rejected (%s); check %s.bot_token", c.o.Name, se.Err, c.o.Key)
		}
		c.log.Warn("auth.test failed; retrying", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

func (c *Channel) allowed(user string) bool {
	return c.allow == nil || c.allow[user]
}

// wait spaces calls into channel by Options.Limits (by default about one
// a second, as chat.postMessage's special rate limit asks) after any 429's
// Retry-After, counting the waits.
//
// Counted: chat.postMessage and chat.update (the messages Slack spaces per
// channel). Not counted: reactions, assistant status (typing), ephemeral
// answers and file uploads, which Slack limits per method, not per
// channel.
func (c *Channel) wait(ctx context.Context, channel string) error {
	d, err := c.pause.Wait(ctx, channel)
	if err == nil {
		var w time.Duration
		w, err = c.throttle.Wait(ctx, channel, false)
		d += w
	}
	c.met.RateLimitWait(d)
	return err
}
