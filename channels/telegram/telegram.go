// Package telegram is the Telegram bot channel: long polling for updates,
// conversations per private chat, per forum topic and per reply chain in
// groups, answers streamed by editing one message and finished as
// Telegram HTML, files both ways, typing, allow-list and rate limits.
//
// It speaks only bus messages (never agent). Sends go through
// github.com/go-telegram/bot; the getUpdates loop is our own so that an
// update is confirmed to Telegram only after its message is stored.
package telegram

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
)

// Name is the channel's name in conversation keys (telegram:<chat>...).
const Name = "telegram"

// Options configures a Channel.
type Options struct {
	// Name is the channel's name in chat keys, on bus messages, in logs
	// and metrics; "" → Name (telegram). Each bot of a process has its own.
	Name string
	// Key is the config key path named in errors; "" → channels.telegram.
	Key          string
	Token        string
	APIURL       string   // e.g. https://api.telegram.org; a fake in tests
	AllowedUsers []string // numeric ids or @usernames; empty lets everyone in
	Store        *store.Store
	Logger       *slog.Logger // nil: slog.Default()
	// PollTimeout is the long-poll wait per getUpdates; 0 → 50 s.
	PollTimeout time.Duration
	HTTPClient  *http.Client     // nil: a client with sane timeouts
	Metrics     *metrics.Metrics // nil: nothing is recorded
	// Limits spaces sends and edits (see limiter); the zero value is no
	// limit of ours (a 429's retry_after is honoured regardless).
	Limits channels.Limits
}

// Channel is a Telegram bot.
type Channel struct {
	o     Options
	log   *slog.Logger
	bot   *tgbot.Bot
	http  *http.Client
	me    *models.User
	allow map[string]bool
	lim   *limiter
	met   *metrics.Channel
	link  channels.Link  // connected once getMe answered, and while polls succeed
	tasks channels.Group // what Start owns: the command menu's registration; downloads' context

	mu        sync.Mutex
	forbidden map[int64]bool      // chats that blocked or removed the bot (logged once)
	heard     map[int64]time.Time // when each chat last wrote to the bot
}

// New returns a Channel. It makes no request until Start.
func New(o Options) (*Channel, error) {
	if o.Token == "" {
		return nil, errors.New("telegram: no bot token")
	}
	o.Name, o.Key = cmp.Or(o.Name, Name), cmp.Or(o.Key, "channels."+Name)
	if o.APIURL == "" {
		o.APIURL = "https://api.telegram.org"
	}
	o.APIURL = strings.TrimRight(o.APIURL, "/")
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = 50 * time.Second
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: o.PollTimeout + 15*time.Second}
	}
	c := &Channel{
		o:         o,
		log:       o.Logger.With("channel", o.Name),
		http:      o.HTTPClient,
		allow:     allowSet(o.AllowedUsers),
		lim:       newLimiter(o.Limits),
		met:       o.Metrics.Channel(o.Name),
		forbidden: map[int64]bool{},
		heard:     map[int64]time.Time{},
	}
	b, err := tgbot.New(o.Token,
		tgbot.WithServerURL(o.APIURL),
		tgbot.WithHTTPClient(o.PollTimeout, serverErrors(o.HTTPClient)),
		tgbot.WithSkipGetMe(),
		tgbot.WithDefaultHandler(func(context.Context, *tgbot.Bot, *models.Update) {}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	c.bot = b
	return c, nil
}

// Name implements bus.Sender.
func (c *Channel) Name() string { return c.o.Name }

// Health implements channels.HealthReporter: connected once the Bot API
// answered getMe, and for as long as getUpdates polls succeed.
func (c *Channel) Health() channels.Health { return c.link.Health() }

// EditInterval implements bus.EditThrottler: once a second, or as slowly
// as Options.Limits asks (by default one edit in 3 s in a group, where
// Telegram allows twenty messages a minute).
func (c *Channel) EditInterval(chatID string) time.Duration {
	return c.o.Limits.EditInterval(strings.HasPrefix(chatID, "-"))
}

// Start learns who the bot is, registers the commands and polls for
// updates until ctx ends. It returns early only on a fatal error (such as
// a rejected token), and in any case once every goroutine it started has
// ended.
func (c *Channel) Start(ctx context.Context, b bus.Publisher) error {
	ctx = c.tasks.Begin(ctx)
	defer c.tasks.End()
	me, err := c.getMe(ctx)
	if err != nil {
		return err
	}
	c.me = me
	c.link.Set(true, "polling")
	// The command menu is not needed to receive messages: register it
	// while polling starts.
	c.tasks.Go(c.registerCommands)
	c.log.Info("telegram connected", "bot", "@"+me.Username)
	return c.poll(ctx, b)
}

// registerCommands sets the bot's command menu.
func (c *Channel) registerCommands(ctx context.Context) {
	cmds := make([]models.BotCommand, 0, len(bus.Commands))
	for _, cmd := range bus.Commands {
		cmds = append(cmds, models.BotCommand{Command: cmd.Name, Description: cmd.Help})
	}
	if _, err := c.bot.SetMyCommands(ctx, &tgbot.SetMyCommandsParams{Commands: cmds}); err != nil && ctx.Err() == nil {
		c.log.Warn("setMyCommands failed", "err", err)
	}
}

// getMe asks who the bot is, retrying transient failures; a rejected
// token is fatal.
func (c *Channel) getMe(ctx context.Context) (*models.User, error) {
	delay := time.Second
	for {
		me, err := c.bot.GetMe(ctx)
		if err == nil {
			return me, nil
		}
		if errors.Is(err, tgbot.ErrorUnauthorized) || errors.Is(err, tgbot.ErrorNotFound) {
			return nil, fmt.Errorf("%s: the bot token was rejected; check %s.bot_token", c.o.Name, c.o.Key)
		}
		c.log.Warn("getMe failed; retrying", "err", err, "in", delay)
		c.link.Set(false, "getMe failed: "+failure(err))
		c.met.Error(metrics.ErrChannel)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 30*time.Second)
	}
}

// Typing implements bus.Typer.
func (c *Channel) Typing(ctx context.Context, out *bus.Outbound) error {
	chat, err := strconv.ParseInt(out.ChatID, 10, 64)
	if err != nil {
		return err
	}
	_, err = c.bot.SendChatAction(ctx, &tgbot.SendChatActionParams{
		ChatID: chat, MessageThreadID: topicThread(out.Topic), Action: models.ChatActionTyping,
	})
	return err
}

func allowSet(users []string) map[string]bool {
	if len(users) == 0 {
		return nil
	}
	m := make(map[string]bool, len(users))
	for _, u := range users {
		u = strings.ToLower(strings.TrimSpace(u))
		if u != "" {
			m[u] = true
		}
	}
	return m
}

// allowed reports whether u may use the bot.
func (c *Channel) allowed(u *models.User) bool {
	if c.allow == nil {
		return true
	}
	if c.allow[strconv.FormatInt(u.ID, 10)] {
		return true
	}
	return u.Username != "" && c.allow["@"+strings.ToLower(u.Username)]
}

// Topics: a forum topic is "t<thread id>" and is echoed back as
// message_thread_id; a group reply chain is "m<first message id>".
func topicThread(topic string) int {
	if strings.HasPrefix(topic, "t") {
		n, _ := strconv.Atoi(topic[1:])
		return n
	}
	return 0
}
