// Command deerflow runs the agent behind chat platforms (serve), in the
// terminal (chat), validates a configuration (check), or prints its version.
// It is the one place where packages are constructed and wired together.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/deerflow/deerflow/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func versionString() string {
	v := version
	if v == "" {
		v = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	return v
}

const usage = `deerflow — an agent harness behind chat platforms.

Usage:
  deerflow serve [--config FILE]   run every enabled channel until SIGINT/SIGTERM
  deerflow chat  [--config FILE]   talk to the agent in this terminal
  deerflow check [--config FILE]   validate the configuration and show what would start
  deerflow version                 print the version

Without --config, ./config.yaml is read if present, else built-in defaults
plus the environment (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL).
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "deerflow %s (%s %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	case "serve", "chat", "check":
	default:
		fmt.Fprintf(stderr, "deerflow: unknown command %q\n\n%s", cmd, usage)
		return 2
	}

	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "configuration file (default ./config.yaml if present)")
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "deerflow %s: unexpected argument %q\n", cmd, fs.Arg(0))
		return 2
	}
	cfg, used, err := config.Resolve(*cfgPath)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "deerflow: invalid configuration:\n%v\n", err)
		return 1
	}

	switch cmd {
	case "check":
		return check(cfg, used, stdout)
	case "chat":
		err = chat(ctx, cfg, stdin, stdout, stderr)
	case "serve":
		err = serve(ctx, cfg, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "deerflow: %v\n", err)
		return 1
	}
	return 0
}
