package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/config"
)

// serve runs every enabled channel until SIGINT or SIGTERM, then shuts down
// gracefully: intake stops, running turns are cancelled and record their
// state, the store is closed.
func serve(ctx context.Context, cfg *config.Config, stderr io.Writer) error {
	log := newLogger(cfg, stderr)
	chans, err := platformChannels(cfg)
	if err != nil {
		return err
	}
	a, err := newApp(cfg, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, len(chans))
	for _, ch := range chans {
		a.bus.Register(ch)
	}
	if _, err := a.bus.Recover(ctx); err != nil {
		a.shutdown(time.Second)
		return err
	}
	for _, ch := range chans {
		go func() { errc <- ch.Start(ctx, a.bus) }()
	}
	log.Info("deerflow serving", "version", versionString(), "channels", len(chans), "data_dir", cfg.DataDir)
	select {
	case <-ctx.Done():
	case err = <-errc:
		log.Error("channel stopped", "err", err)
	}
	log.Info("shutting down")
	stop()
	a.shutdown(30 * time.Second)
	return err
}

// platformChannels builds every enabled chat platform channel.
func platformChannels(cfg *config.Config) ([]channels.Channel, error) {
	var out []channels.Channel
	for _, c := range channelSwitches(cfg) {
		if c.enabled {
			// The platform adapters are not part of this build yet.
			return nil, fmt.Errorf("channels.%s.enabled: this build of deerflow has no %s channel yet", c.name, c.name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no channel is enabled: set channels.telegram.enabled, channels.slack.enabled or channels.lark.enabled, or use `deerflow chat`")
	}
	return out, nil
}

// channelSwitch is one platform channel and whether the config enables it.
type channelSwitch struct {
	name    string
	enabled bool
}

func channelSwitches(cfg *config.Config) []channelSwitch {
	return []channelSwitch{
		{"telegram", cfg.Channels.Telegram.Enabled},
		{"slack", cfg.Channels.Slack.Enabled},
		{"lark", cfg.Channels.Lark.Enabled},
	}
}
