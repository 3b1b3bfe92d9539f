package bwrap

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Program is what a long-running program (an MCP server) needs to see of
// this machine to run in a sandbox, beyond the system directories.
type Program struct {
	// Path is the command found through PATH; symlinks are kept, since
	// some programs look at the name they were started by.
	Path string
	// ReadOnly are the host directories to show read-only at their own
	// paths (IsolateOptions.ReadOnly). A program lying directly in a
	// directory too wide to show (the home directory, /tmp) is named
	// itself, as a file.
	ReadOnly []string
	// PathDirs are the directories the program and its interpreter were
	// found in, for the front of PATH (IsolateOptions.PathDirs), so that
	// "#!/usr/bin/env node" finds the same node in the sandbox.
	PathDirs []string
}

// maxShebangs bounds a chain of interpreters (a script run by a script).
const maxShebangs = 4

// ProgramDirs finds command the way a shell would, through pathEnv (a
// PATH value), and returns the directories it needs: its own (and, for a
// symlink, its target's); for a program in a node_modules tree, the
// project holding the top-most node_modules; for an interpreter named by
// a "#!" line (also "#!/usr/bin/env [-S] name"), found the same way, its
// directory or, for one in a bin directory beside a lib (nvm, pyenv, a
// virtualenv, a uv Python), that install root; the caches of npx and
// uv(x) when the command is one of them; and what absolute paths in args
// name. Never "/", a top-level directory, a home directory or its
// parents, nor one holding or inside credentials (~/.ssh, ~/.aws, …).
func ProgramDirs(command string, args []string, pathEnv string) (Program, error) {
	home, _ := os.UserHomeDir()
	return programDirs(command, args, pathEnv, home)
}

func programDirs(command string, args []string, pathEnv, home string) (Program, error) {
	f := &progFinder{path: pathEnv, home: filepath.Clean(home)}
	p, err := f.look(command)
	if err != nil {
		return Program{}, err
	}
	if err := f.add(p, 0); err != nil {
		return Program{}, err
	}
	f.caches(filepath.Base(command))
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v // --directory=/path
		}
		if filepath.IsAbs(a) {
			f.arg(filepath.Clean(a))
		}
	}
	return f.result(p), nil
}

// progFinder collects what a program needs.
type progFinder struct {
	path, home string
	dirs       []string
	files      []string
	pathDirs   []string
}

// look finds name as a shell would: a name with a slash as it is, else
// the first executable file of that name in an absolute PATH directory.
func (f *progFinder) look(name string) (string, error) {
	if strings.Contains(name, "/") {
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", err
		}
		if !executable(abs) {
			return "", fmt.Errorf("%s is not an executable file", name)
		}
		return abs, nil
	}
	for _, d := range filepath.SplitList(f.path) {
		if !filepath.IsAbs(d) {
			continue // "" and relative entries mean the working directory: never
		}
		if p := filepath.Join(d, name); executable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH", name)
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// add takes in the program or interpreter p, found in PATH or named by a
// "#!" line, and the interpreter it names, if any.
func (f *progFinder) add(p string, depth int) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	f.pathDirs = append(f.pathDirs, filepath.Dir(p))
	f.place(p)
	if real != p {
		f.place(real)
	}
	interp, err := f.shebang(real)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", p, err)
	case interp == "":
		return nil
	case depth+1 >= maxShebangs:
		return fmt.Errorf("%s: too many interpreters in a row", p)
	}
	return f.add(interp, depth+1)
}

// place adds the directory that file p needs: the project of its
// node_modules tree, the install root of a bin directory beside a lib
// (or of a version manager's shims), or its own directory; when that is
// too wide to show, a narrower one or the file itself.
func (f *progFinder) place(p string) {
	dir := filepath.Dir(p)
	var wide []string
	if i := strings.Index(p+"/", "/node_modules/"); i >= 0 {
		nm := p[:i+len("/node_modules")]
		wide = append(wide, filepath.Dir(nm), nm)
	}
	switch root := filepath.Dir(dir); filepath.Base(dir) {
	case "bin":
		if st, err := os.Stat(filepath.Join(root, "lib")); err == nil && st.IsDir() {
			wide = append(wide, root)
		}
	case "shims": // pyenv, rbenv, asdf: the shim runs the manager's own files
		wide = append(wide, root)
	}
	for _, d := range append(wide, dir) {
		if f.allowed(d) {
			f.dirs = append(f.dirs, d)
			return
		}
	}
	if f.allowed(p) {
		f.files = append(f.files, p)
	}
}

// arg adds what an absolute path among the arguments names, if it exists:
// a directory itself, a file as place does.
func (f *progFinder) arg(p string) {
	st, err := os.Stat(p)
	switch {
	case err != nil:
	case st.IsDir():
		if f.allowed(p) {
			f.dirs = append(f.dirs, p)
		}
	case st.Mode().IsRegular():
		f.place(p)
	}
}

// shebang returns the interpreter that p's "#!" line names, found as a
// shell would; "" when p has none.
func (f *progFinder) shebang(p string) (string, error) {
	fh, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	line, err := bufio.NewReaderSize(fh, 512).ReadSlice('\n')
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(line) == 0 {
		return "", nil // empty, or unreadable: not a script
	}
	rest, ok := strings.CutPrefix(string(line), "#!")
	if !ok {
		return "", nil
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", errors.New(`an empty "#!" line`)
	}
	name := fields[0]
	if filepath.Base(name) == "env" {
		name = envProgram(fields[1:])
		if name == "" {
			return "", fmt.Errorf("no program after %s in its \"#!\" line", fields[0])
		}
	}
	ip, err := f.look(name)
	if err != nil {
		return "", fmt.Errorf("its interpreter %w", err)
	}
	return ip, nil
}

// envProgram is the program that "env [options] [NAME=value]... program"
// runs; -S splits its argument, which may start with the program.
func envProgram(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			i++ // an option with a value
		case a == "-S" || a == "--split-string" || a == "--":
		case strings.HasPrefix(a, "-S"):
			return strings.Fields(a[2:])[0]
		case strings.HasPrefix(a, "-"), strings.Contains(a, "="):
		default:
			return a
		}
	}
	return ""
}

// caches adds what a package runner keeps between runs: npx's packages,
// uv's cache. They are shown read-only; the program writes its own in its
// private home.
func (f *progFinder) caches(command string) {
	var dirs []string
	switch command {
	case "npx":
		dirs = []string{".npm/_npx"}
	case "uv", "uvx":
		dirs = []string{".cache/uv", ".local/share/uv/python"}
	}
	for _, d := range dirs {
		p := filepath.Join(f.home, d)
		if st, err := os.Stat(p); err == nil && st.IsDir() && f.allowed(p) {
			f.dirs = append(f.dirs, p)
		}
	}
}

// secrets are places under a home directory that hold credentials.
var secrets = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store",
	".netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass", ".vault-token",
	".config/gcloud", ".config/gh", ".config/hub", ".local/share/keyrings",
	".cargo/credentials.toml", ".terraform.d", ".mozilla", ".config/google-chrome",
	".config/chromium",
}

// secretNames are directory names that hold credentials wherever they are.
var secretNames = []string{".ssh", ".gnupg", ".aws", ".kube", ".docker", ".password-store"}

// allowed reports whether p may be shown to the program: not "/" or a
// top-level directory, not a home directory or one of its parents, not
// inside the sandbox's own paths, neither holding nor inside credentials.
// Paths in the system directories are visible already: not needed.
func (f *progFinder) allowed(p string) bool {
	if strings.Count(p, "/") < 2 || within(p, UserData) || within(p, HomeDir) ||
		slices.ContainsFunc(SystemDirs, func(s string) bool { return within(p, s) }) {
		return false
	}
	if f.home != "" && f.home != "/" {
		if within(f.home, p) || filepath.Dir(p) == filepath.Dir(f.home) {
			return false // the home, its parents, or another user's home
		}
		for _, s := range secrets {
			s = filepath.Join(f.home, s)
			if within(s, p) || within(p, s) {
				return false
			}
		}
	}
	for _, part := range strings.Split(p, "/") {
		if slices.Contains(secretNames, part) {
			return false
		}
	}
	return true
}

// result is the program at p with what it needs, without repeats or
// entries inside others; PathDirs only those shown.
func (f *progFinder) result(p string) Program {
	slices.SortFunc(f.dirs, func(a, b string) int { return len(a) - len(b) }) // parents first
	var dirs []string
	shown := func(p string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return within(p, d) })
	}
	for _, d := range f.dirs {
		if !shown(d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	out := Program{Path: p, ReadOnly: dirs}
	for _, file := range f.files {
		if !shown(file) && !slices.Contains(out.ReadOnly, file) {
			out.ReadOnly = append(out.ReadOnly, file)
		}
	}
	for _, d := range f.pathDirs {
		if shown(d) && !slices.Contains(out.PathDirs, d) {
			out.PathDirs = append(out.PathDirs, d)
		}
	}
	return out
}
