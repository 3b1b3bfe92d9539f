package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/channels/lark"
	"github.com/deerflow/deerflow/channels/slack"
	"github.com/deerflow/deerflow/channels/telegram"
	"github.com/deerflow/deerflow/config"
)

// serve runs every enabled channel until SIGINT or SIGTERM, then shuts down
// gracefully: intake stops, running turns get shutdown.grace_seconds to
// finish before they are cancelled (and record their state), the memory
// queue is flushed, the store is closed, and the exit status is 0.
//
// check, when set, is the start-up model check (checkModels). It runs
// while the store opens and the app is wired, and nothing runs or
// connects unless it passes.
func serve(ctx context.Context, cfg *config.Config, stderr io.Writer, check func(context.Context) error) error {
	log := newLogger(cfg, stderr)
	if err := servable(cfg); err != nil {
		return err
	}
	collectLessOften()
	for _, w := range cfg.Warnings() { // a channel open to everyone, above all
		log.Warn("WARNING: " + w.Error())
	}
	checked := make(chan error, 1)
	if check == nil {
		checked <- nil
	} else {
		go func() { checked <- check(ctx) }() // bounded: probe.Timeout a model
	}
	a, err := newAppDeferred(cfg, log, func() error { return <-checked }) // settle starts the background work
	if err != nil {
		return err
	}
	chans, err := platformChannels(cfg, a)
	if err != nil {
		a.shutdown(0)
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc, err := startChannels(ctx, a, chans)
	if err != nil {
		a.shutdown(0)
		return err
	}
	go settle(ctx, a, chans)
	opsSrv, err := startOps(a, chans)
	if err != nil {
		stop()
		a.shutdown(0)
		return err
	}
	log.Info("deerflow serving", "version", versionString(), "channels", len(chans), "data_dir", cfg.DataDir)
	select {
	case <-ctx.Done():
	case err = <-errc:
		log.Error("channel stopped", "err", err)
	}
	log.Info("shutting down")
	stop()
	a.shutdown(time.Duration(cfg.Shutdown.GraceSeconds) * time.Second)
	stopOps(opsSrv)
	return err
}

// collectLessOften sets the garbage collector's GOGC to 200 unless the
// environment sets GOGC. A service's live heap is a few megabytes, which
// the default (100) collects every few dozen messages: on 2 cores that
// was a fifth of the CPU each message costs (2.6 → 2.1 ms, and in p99
// 2.3 → 2.0 ms, BenchmarkHarnessOverhead), for 4.6 MB more resident with
// 10,000 live conversations (45 → 50 MB) and no change when idle.
func collectLessOften() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
}

// startChannels registers chans with the bus, resumes the messages a
// previous process accepted, then starts each channel. A channel's fatal
// error arrives on the returned channel.
func startChannels(ctx context.Context, a *app, chans []channels.Channel) (<-chan error, error) {
	for _, ch := range chans {
		a.router.Register(ch)
	}
	if err := startRuns(ctx, a); err != nil {
		return nil, err
	}
	a.router.Start(ctx)
	errc := make(chan error, len(chans))
	for _, ch := range chans {
		go func() { errc <- ch.Start(ctx, a.router) }()
	}
	return errc, nil
}

// platformChannels builds one channel per enabled bot (config.ChannelInstances).
func platformChannels(cfg *config.Config, a *app) ([]channels.Channel, error) {
	var out []channels.Channel
	for _, in := range cfg.ChannelInstances() {
		var ch channels.Channel
		var err error
		switch t, sl, lk := in.Telegram, in.Slack, in.Lark; {
		case t != nil:
			ch, err = telegram.New(telegram.Options{Name: in.Name, Key: in.Key,
				Token: t.BotToken, APIURL: t.APIURL, AllowedUsers: t.AllowedUsers,
				Store: a.store, Logger: a.log, Metrics: a.metrics, Limits: telegramLimits(t.Limits),
			})
		case sl != nil:
			ch, err = slack.New(slack.Options{Name: in.Name, Key: in.Key,
				BotToken: sl.BotToken, AppToken: sl.AppToken, APIURL: sl.APIURL,
				AllowedUsers: sl.AllowedUsers, Store: a.store, Logger: a.log, Metrics: a.metrics,
				Limits: sendLimits(sl.Limits),
			})
		default:
			ch, err = lark.New(lark.Options{Name: in.Name, Key: in.Key,
				AppID: lk.AppID, AppSecret: lk.AppSecret, Domain: lk.Domain,
				AllowedUsers: lk.AllowedUsers, Store: a.store, Logger: a.log, Metrics: a.metrics,
				Limits: sendLimits(lk.Limits),
			})
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// telegramLimits and sendLimits are the limits of ours a channel keeps
// to, from channels.*.limits.
func telegramLimits(l config.TelegramLimits) channels.Limits {
	return channels.Limits{PerChatPerSecond: l.PerChatPerSecond, PerChatBurst: l.PerChatBurst,
		PerGroupPerMinute: l.PerGroupPerMinute, GlobalPerSecond: l.GlobalPerSecond}
}

func sendLimits(l config.SendLimits) channels.Limits {
	return channels.Limits{PerChatPerSecond: l.PerChatPerSecond, PerChatBurst: l.PerChatBurst, GlobalPerSecond: l.GlobalPerSecond}
}

// servable refuses a configuration that would serve nothing.
func servable(cfg *config.Config) error {
	apiOnly := cfg.HTTP.Listen != "" && cfg.HTTP.APIToken != ""
	if len(cfg.ChannelInstances()) == 0 && !apiOnly {
		return errors.New("no channel is enabled: set channels.telegram.enabled, channels.slack.enabled or channels.lark.enabled (or TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN and SLACK_APP_TOKEN, LARK_APP_ID and LARK_APP_SECRET), or http.listen and http.api_token for the HTTP API, or use `deerflow chat`")
	}
	return nil
}

// startRuns lets runs start once the senders are registered: the runs the
// recovery pass (newApp) queued again, and the messages an older deerflow
// left in its own intake queue, which join the runner's.
func startRuns(ctx context.Context, a *app) error {
	a.runner.Start()
	_, err := a.router.Adopt(ctx)
	a.startScheduler(ctx)
	return err
}
