package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels/console"
	"github.com/deerflow/deerflow/config"
)

// chat runs the agent in the terminal: the console channel through the same
// bus and router as the platform channels. Logs go to <data_dir>/deerflow.log
// so they do not mix with the conversation.
func chat(ctx context.Context, cfg *config.Config, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(cfg.DataDir, "deerflow.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("opening log: %w", err)
	}
	defer logFile.Close()
	a, err := newApp(cfg, newLogger(cfg, logFile))
	if err != nil {
		return err
	}
	defer a.shutdown(0) // the console waits for its answers itself

	tty := isTerminal(stdout) && isTerminal(stdin)
	if tty {
		fmt.Fprintf(stdout, "deerflow %s · model %s · /help for commands, /exit to leave\n", versionString(), cfg.DefaultModel().Name)
	}
	err = runConsole(ctx, a, stdin, stdout, tty)
	if tty {
		fmt.Fprintln(stdout)
	}
	return err
}

// runConsole connects a console channel on stdin/stdout to a's bus and runs
// it until EOF (after the last answer), /exit, or ctx ends.
func runConsole(ctx context.Context, a *app, stdin io.Reader, stdout io.Writer, tty bool) error {
	c := console.New(console.Options{
		In: stdin, Out: stdout, User: a.cfg.Console.User, Color: tty,
		Prompt: promptFor(tty),
	})
	a.router.Register(c)
	if err := startRuns(ctx, a); err != nil {
		return err
	}
	a.router.Start(ctx)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Ctrl-C stops the running reply; one with nothing running leaves.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-sigs:
				if a.agent.Running() == 0 {
					cancel()
					return
				}
				a.router.Publish(ctx, &bus.Inbound{Channel: console.Name, ChatID: console.ChatID, UserID: a.cfg.Console.User, Text: "/stop"})
			}
		}
	}()

	err := c.Start(ctx, a.router)
	if errors.Is(err, console.ErrQuit) || errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

func promptFor(tty bool) string {
	if tty {
		return "\x1b[1m›\x1b[0m "
	}
	return ""
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
