// Command deerflow runs the agent behind chat platforms (serve), in the
// terminal (chat), validates a configuration (check), checks and repairs
// the database (doctor), copies it (backup), or prints its version.
// It is the one place where packages are constructed and wired together.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/documents"
	"github.com/deerflow/deerflow/mcp/oauth"
	"github.com/deerflow/deerflow/setup"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/store/doctor"
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

// usage is the help text.
//
//go:embed usage.txt
var usage string

func main() {
	documents.RunChild() // a conversion child converts one file and exits
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
	case "init":
		return setup.Run(ctx, rest, stdin, stdout, stderr)
	case "serve", "chat", "check", "doctor", "backup", "agents", "mcp":
	default:
		fmt.Fprintf(stderr, "deerflow: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	a, ok := parseArgs(cmd, rest, stderr)
	if !ok {
		return 2
	}
	cfg, used, ok := loadConfig(cmd, a.config, stderr)
	if !ok {
		return 1
	}
	var err error
	switch cmd {
	case "doctor":
		return doctor.Run(cfg.DBPath(), a.repair, stdout, stderr)
	case "backup":
		return doctor.BackupCLI(cfg.DBPath(), a.file, stdout, stderr)
	case "agents":
		return agentsCLI(cfg, a.rest, stdout, stderr)
	case "mcp":
		return oauth.CLI(ctx, cfg, a.rest, stdin, stdout, stderr)
	case "check":
		code := check(ctx, cfg, used, stdout)
		if a.probe {
			fmt.Fprintln(stdout)
			code = max(code, probeModels(ctx, cfg, stdout))
		}
		return code
	case "chat":
		err = chat(ctx, cfg, stdin, stdout, stderr)
	case "serve":
		var check func(context.Context) error
		if !a.noModelCheck {
			check = func(ctx context.Context) error { return checkModels(ctx, cfg, stderr) }
		}
		err = serve(ctx, cfg, stderr, check)
	}
	return exitCode(err, stderr)
}

// loadConfig reads and validates the configuration for cmd, reporting
// every problem on stderr (and, for check, the warnings too).
func loadConfig(cmd, flagPath string, stderr io.Writer) (*config.Config, string, bool) {
	cfg, used, err := config.Resolve(flagPath)
	if cfg != nil && cmd != "doctor" && cmd != "backup" { // the store's tools need only the data dir
		err = cfg.Validate() // with the file's own errors: every problem in one pass
		if cmd == "check" || cmd == "chat" || cmd == "serve" {
			err = errors.Join(err, cfg.ModelKeys())
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "deerflow: invalid configuration:\n%v\n", err)
		if cfg != nil && cmd == "check" {
			printWarnings(stderr, cfg)
		}
		return nil, "", false
	}
	return cfg, used, true
}

// exitCode is the exit code of chat or serve ending with err, which it
// reports on stderr with what to do about a damaged store.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "deerflow: %v\n", err)
	if errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrDamaged) {
		fmt.Fprintln(stderr, "Run `deerflow doctor` to see what is damaged, and `deerflow doctor --repair` (deerflow stopped) to salvage what can be read.")
	}
	return 1
}

// args is a command line's flags and argument.
type args struct {
	config string
	rest   []string // agents, mcp: the verb and name
	repair bool     // doctor --repair
	probe  bool     // check --probe-models
	file   string   // backup FILE
	// noModelCheck is serve --no-model-check: start without asking the
	// models whether they answer.
	noModelCheck bool
}

// parseArgs parses a command's flags; backup takes one argument, the
// others none. A mistake is reported on stderr.
func parseArgs(cmd string, rest []string, stderr io.Writer) (args, bool) {
	var a args
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&a.config, "config", "", "configuration file (default ./config.yaml if present)")
	if cmd == "agents" || cmd == "mcp" {
		if err := fs.Parse(rest); err != nil {
			return a, false
		}
		a.rest = fs.Args()
		return a, true
	}
	if cmd == "doctor" {
		fs.BoolVar(&a.repair, "repair", false, "keep the database as a dated backup and write a new one holding everything still readable")
	}
	if cmd == "check" {
		fs.BoolVar(&a.probe, "probe-models", false, "send each configured model a few tiny requests and show what works")
	}
	if cmd == "serve" { // DEERFLOW_NO_MODEL_CHECK=true is the same, for a container's fixed command line
		skip, _ := strconv.ParseBool(os.Getenv("DEERFLOW_NO_MODEL_CHECK"))
		fs.BoolVar(&a.noModelCheck, "no-model-check", skip, "start without first checking that each model answers")
	}
	if err := fs.Parse(rest); err != nil {
		return a, false
	}
	want := 0
	if cmd == "backup" {
		want = 1
	}
	if fs.NArg() < want {
		fmt.Fprintf(stderr, "deerflow %s: which file? usage: deerflow backup [--config FILE] FILE\n", cmd)
		return a, false
	}
	if fs.NArg() > want {
		fmt.Fprintf(stderr, "deerflow %s: unexpected argument %q\n", cmd, fs.Arg(want))
		return a, false
	}
	if want == 1 {
		a.file = fs.Arg(0)
	}
	return a, true
}
