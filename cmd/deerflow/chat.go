package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	err = converse(ctx, a, stdin, stdout, stderr, tty)
	if tty {
		fmt.Fprintln(stdout)
	}
	return err
}

// converse connects a console channel on stdin/stdout to a's bus and runs
// it until the input ends (after the last answer, for a script), /exit,
// Ctrl-C with nothing running, or ctx ends.
func converse(ctx context.Context, a *app, stdin io.Reader, stdout, stderr io.Writer, tty bool) error {
	c := console.New(console.Options{
		In: stdin, Out: stdout, Err: stderr, User: a.cfg.Console.User, Terminal: tty,
		History: filepath.Join(a.cfg.DataDir, "chat_history"),
		Busy:    func() bool { return a.agent.Running() > 0 },
	})
	a.router.Register(c)
	if err := startRuns(ctx, a); err != nil {
		return err
	}
	a.router.Start(ctx)
	err := c.Start(ctx, a.router)
	if errors.Is(err, console.ErrQuit) || errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
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
