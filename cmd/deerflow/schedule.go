package main

import (
	"context"
	"strings"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/scheduler"
)

// wireScheduler builds the scheduler when scheduler.enabled is set: its
// tools join the lead's, its runs go through the runner and are shown by
// the router (built after it, hence the closures).
func (a *app) wireScheduler() error {
	sc := a.cfg.Scheduler
	if !sc.Enabled {
		return nil
	}
	s, err := scheduler.New(scheduler.Options{
		Store:       a.store,
		Submit:      a.runner.Submit,
		Allowed:     allowList(a.cfg),
		SenderName:  func(runID string) string { return a.router.SenderName(runID) },
		Notify:      func(chatKey, text string) { a.router.Notify(chatKey, text) },
		MinInterval: time.Duration(sc.MinIntervalSeconds) * time.Second,
		MaxPerUser:  sc.MaxPerUser,
		MaxFailures: sc.MaxFailures,
		Timezone:    sc.Timezone,
		Logger:      a.log,
	})
	if err != nil {
		return err
	}
	a.scheduler = s
	for _, t := range s.Tools() {
		a.tools.Add(t)
	}
	return nil
}

// startScheduler starts the scheduler's timer once runs may start; the
// shutdown stops it first.
func (a *app) startScheduler(ctx context.Context) {
	if a.scheduler != nil {
		a.scheduler.Start(ctx)
	}
}

// allowList re-checks a scheduled task's creator ("channel:user id", and
// the Telegram user name when known) against the allowed_users of that
// channel (each bot its own, disabled ones too), as the channel checks
// every message.
func allowList(cfg *config.Config) func(user, userName string) bool {
	lists := map[string]config.ChannelInstance{}
	for _, in := range cfg.AllChannelInstances() {
		lists[in.Name] = in
	}
	return func(user, userName string) bool {
		channel, id, _ := strings.Cut(user, ":")
		in := lists[channel]
		if len(in.AllowedUsers) == 0 {
			return true
		}
		for _, u := range in.AllowedUsers {
			u = strings.TrimSpace(u)
			if u == id || in.Telegram != nil && userName != "" && strings.EqualFold(u, "@"+userName) {
				return true
			}
		}
		return false
	}
}
