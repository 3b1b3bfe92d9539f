package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// app is everything one deerflow process runs, wired from a Config.
type app struct {
	cfg   *config.Config
	log   *slog.Logger
	store *store.Store
	tools *tools.Registry
	agent *agent.Agent
	bus   *bus.Bus
}

// newLogger returns the process logger writing to w, per cfg.Log.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.Log.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// newApp opens the store and wires the agent and the bus. The caller must
// call close.
func newApp(cfg *config.Config, log *slog.Logger) (*app, error) {
	st, err := store.Open(cfg.DBPath(), store.Options{Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, log: log, store: st, tools: buildTools(cfg)}
	ag, err := agent.New(agent.Options{
		Store:       st,
		Models:      modelRefs(cfg, log),
		Tools:       a.tools,
		Prompt:      prompt(cfg),
		MaxTurns:    cfg.Agent.MaxTurns,
		ToolTimeout: time.Duration(cfg.Agent.ToolTimeoutSeconds) * time.Second,
		Logger:      log,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	a.agent = ag
	a.bus, err = bus.New(bus.Options{
		Store:     st,
		Agent:     ag,
		MaxQueued: cfg.Router.MaxQueued,
		Logger:    log,
		Version:   versionString(),
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	if err := a.recover(); err != nil {
		log.Error("recovering interrupted runs", "err", err)
	}
	return a, nil
}

// recover marks runs that were in flight when a previous process died as
// interrupted. Their threads are repaired by the agent on the next run.
func (a *app) recover() error {
	return a.store.Update(func(tx *store.Tx) error {
		runs, err := tx.RunsWithStatus(store.RunRunning)
		if err != nil {
			return err
		}
		for _, r := range runs {
			r.Status = store.RunInterrupted
			r.Ended = time.Now()
			if err := tx.PutRun(r); err != nil {
				return err
			}
			a.log.Warn("run was interrupted by a restart", "run", r.ID, "thread", r.ThreadID)
		}
		return nil
	})
}

// shutdown stops running turns (they record their state), then closes the
// store.
func (a *app) shutdown(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	a.bus.Close(ctx, errShutdown)
	if err := a.store.Close(); err != nil {
		a.log.Error("closing store", "err", err)
	}
}

var errShutdown = fmt.Errorf("deerflow is shutting down")

// buildTools returns the lead agent's tools for cfg.
func buildTools(cfg *config.Config) *tools.Registry {
	return tools.NewRegistry()
}

func modelRefs(cfg *config.Config, log *slog.Logger) []agent.ModelRef {
	refs := make([]agent.ModelRef, 0, len(cfg.Models))
	for _, m := range cfg.Models {
		name := m.Name
		client := llm.New(llm.Options{
			BaseURL:       m.BaseURL,
			APIKey:        m.APIKey,
			Model:         m.Model,
			Timeout:       time.Duration(m.TimeoutSeconds) * time.Second,
			MaxRetries:    m.MaxRetries,
			SendReasoning: m.SendReasoning,
			Logf: func(format string, args ...any) {
				log.Warn(fmt.Sprintf(format, args...), "model", name)
			},
		})
		refs = append(refs, agent.ModelRef{
			Name: m.Name, ID: m.Model, Description: m.Description, Model: client,
			MaxTokens: m.MaxTokens, Temperature: m.Temperature,
		})
	}
	return refs
}

func prompt(cfg *config.Config) *agent.Prompt {
	p := agent.DefaultPrompt(cfg.Agent.Name)
	if soul := strings.TrimSpace(cfg.Agent.Soul); soul != "" {
		p.SetSection(agent.SectionSoul, func(context.Context, *agent.Input) string {
			return "<soul>\n" + soul + "\n</soul>"
		})
	}
	return p
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
