package config

import "time"

// Scheduler configures scheduled tasks (schedule_task, /schedules).
type Scheduler struct {
	Enabled            bool   `yaml:"enabled"`              // default true (only when the key is absent)
	MinIntervalSeconds int    `yaml:"min_interval_seconds"` // the shortest interval between a task's runs; default 60
	MaxPerUser         int    `yaml:"max_per_user"`         // tasks one person may have, across chats; default 20
	MaxFailures        int    `yaml:"max_failures"`         // failed runs in a row that pause a task; default 3
	Timezone           string `yaml:"timezone"`             // a cron schedule's zone when the task names none; default UTC
}

func (c *Config) schedulerDefaults() {
	if !c.given("scheduler.enabled") {
		c.Scheduler.Enabled = true
	}
	defInt(&c.Scheduler.MinIntervalSeconds, 60)
	defInt(&c.Scheduler.MaxPerUser, 20)
	defInt(&c.Scheduler.MaxFailures, 3)
	defString(&c.Scheduler.Timezone, "UTC")
}

func (v *validator) scheduler() {
	s := v.c.Scheduler
	v.between("scheduler.min_interval_seconds", s.MinIntervalSeconds, 1, 7*24*3600)
	v.between("scheduler.max_per_user", s.MaxPerUser, 1, 10_000)
	v.between("scheduler.max_failures", s.MaxFailures, 1, 100)
	if _, err := time.LoadLocation(s.Timezone); err != nil {
		v.fail("scheduler.timezone", "must be an IANA time zone such as UTC, Europe/Berlin or America/New_York")
	}
}
