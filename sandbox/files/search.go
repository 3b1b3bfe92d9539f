package files

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/deerflow/deerflow/sandbox/truncate"
)

// LsMaxChars is the most characters ls returns (head-truncated, as in
// DeerFlow).
const LsMaxChars = 20_000

const (
	globDefaultMax = 200
	grepDefaultMax = 100
	resultsCeiling = 1000
	grepMaxFile    = 16 << 20 // larger files are skipped
	grepLineChars  = 300
)

// LsArgs are ls's arguments.
type LsArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are listing, in a few words."`
	Path        string `json:"path,omitempty" desc:"Directory to list, as an absolute virtual path or relative to /mnt/user-data/workspace. Default: /mnt/user-data/workspace."`
}

// Ls lists directory l as a tree two levels deep (or describes file l).
// Links whose target is under one of shown, or relative without "..",
// show it; others could name a host path.
func Ls(l Loc, shown ...string) (string, error) {
	r, err := l.Open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	st, err := r.Stat(l.Rel)
	if err != nil {
		return "", l.Fail(err)
	}
	if !st.IsDir() {
		return fmt.Sprintf("%s (%s)", l.Path, Size(st.Size())), nil
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(l.Path, "/") + "/\n")
	fsys := r.FS()
	var walk func(rel, indent string, depth int) error
	walk = func(rel, indent string, depth int) error {
		entries, err := fs.ReadDir(fsys, rel)
		if err != nil {
			return err
		}
		if len(entries) == 0 && depth == 1 {
			b.WriteString(indent + "(empty)\n")
		}
		for _, e := range entries {
			name, child := e.Name(), path.Join(rel, e.Name())
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				target, _ := fs.ReadLink(fsys, child)
				fmt.Fprintf(&b, "%s%s -> %s\n", indent, name, l.linkTarget(target, shown))
			case e.IsDir():
				fmt.Fprintf(&b, "%s%s/\n", indent, name)
				if depth < 2 {
					if err := walk(child, indent+"  ", depth+1); err != nil {
						fmt.Fprintf(&b, "%s  (cannot list: %v)\n", indent, l.Child(child).Fail(err))
					}
				}
			default:
				if info, err := e.Info(); err == nil {
					fmt.Fprintf(&b, "%s%s (%s)\n", indent, name, Size(info.Size()))
				} else {
					fmt.Fprintf(&b, "%s%s\n", indent, name)
				}
			}
			if b.Len() > 4*LsMaxChars {
				return nil // enough to fill the limit
			}
		}
		return nil
	}
	if err := walk(l.Rel, "  ", 1); err != nil {
		return "", l.Fail(err)
	}
	out := strings.TrimRight(b.String(), "\n")
	return truncate.Head(out, LsMaxChars, "List a subdirectory, or use glob to find particular files."), nil
}

// linkTarget shows a symlink's target when it stays in the sandbox's
// terms: relative without "..", or a virtual path. Anything else could be
// a host path.
func (l Loc) linkTarget(target string, shown []string) string {
	if strings.HasPrefix(target, "/") {
		if within(target, l.Virtual) || slices.ContainsFunc(shown, func(v string) bool { return within(target, v) }) {
			return target
		}
	} else if target != "" && !slices.Contains(strings.Split(target, "/"), "..") {
		return target
	}
	return "(a link outside the sandbox)"
}

// Size formats a byte count for people.
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

// GlobArgs are glob's arguments.
type GlobArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are searching, in a few words."`
	Pattern     string `json:"pattern" desc:"Glob pattern relative to path, e.g. **/*.py or data/*.csv (** matches any number of directories, {a,b} alternatives)."`
	Path        string `json:"path,omitempty" desc:"Directory to search in. Default: /mnt/user-data/workspace."`
	IncludeDirs bool   `json:"include_dirs,omitempty" desc:"Also return matching directories, not only files."`
	MaxResults  int    `json:"max_results,omitempty" desc:"Most paths to return. Default 200."`
}

// Glob finds the paths matching in.Pattern below the directory
// resolveDir names ("" for the workspace).
func Glob(ctx context.Context, in GlobArgs, resolveDir func(string) (Loc, error)) (string, error) {
	pattern, dir := strings.TrimSpace(in.Pattern), in.Path
	if strings.HasPrefix(pattern, "/") { // an absolute pattern names its own directory
		dir, pattern = doublestar.SplitPattern(pattern)
	}
	if pattern == "" || !doublestar.ValidatePattern(pattern) || slices.Contains(strings.Split(pattern, "/"), "..") {
		return "", fmt.Errorf("%q is not a valid glob pattern (use patterns like **/*.md; '..' is not allowed)", in.Pattern)
	}
	l, err := resolveDir(dir)
	if err != nil {
		return "", err
	}
	r, err := l.Open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	if st, err := r.Stat(l.Rel); err != nil {
		return "", l.Fail(err)
	} else if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", l.Path)
	}
	fsys, err := fs.Sub(r.FS(), l.Rel)
	if err != nil {
		return "", l.Fail(err)
	}
	limit := limitOr(in.MaxResults, globDefaultMax)
	var found []string
	total := 0
	opts := []doublestar.GlobOption{doublestar.WithNoFollow()}
	if !in.IncludeDirs {
		opts = append(opts, doublestar.WithFilesOnly())
	}
	err = doublestar.GlobWalk(fsys, pattern, func(p string, _ fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		total++
		if len(found) < limit {
			found = append(found, path.Join(l.Path, p))
		}
		return nil
	}, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", l.Fail(err)
	}
	if total == 0 {
		return fmt.Sprintf("No paths match %s in %s.", pattern, l.Path), nil
	}
	out := strings.Join(found, "\n")
	if total > len(found) {
		out += fmt.Sprintf("\n[%s more matches not shown (%s in all); narrow the pattern or raise max_results]", truncate.Thousands(total-len(found)), truncate.Thousands(total))
	}
	return out, nil
}

func limitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return min(n, resultsCeiling)
}

// within reports whether virtual path p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// below returns p relative to dir, both slash paths inside one fs.FS.
func below(p, dir string) string {
	if dir == "." {
		return p
	}
	if p == dir {
		return "."
	}
	return strings.TrimPrefix(p, dir+"/")
}

// GrepArgs are grep's arguments.
type GrepArgs struct {
	Description   string `json:"description,omitempty" desc:"Why you are searching, in a few words."`
	Pattern       string `json:"pattern" desc:"Regular expression (RE2 syntax) to look for, line by line."`
	Path          string `json:"path,omitempty" desc:"File or directory to search. Default: /mnt/user-data/workspace."`
	Glob          string `json:"glob,omitempty" desc:"Only search files matching this glob, e.g. *.py (matched against the file name) or src/**/*.go (matched against the path below path)."`
	Literal       bool   `json:"literal,omitempty" desc:"Treat pattern as plain text, not a regular expression."`
	CaseSensitive bool   `json:"case_sensitive,omitempty" desc:"Match case exactly. Default: case-insensitive."`
	MaxResults    int    `json:"max_results,omitempty" desc:"Most matching lines to return. Default 100."`
}

// Grep finds the lines matching in.Pattern in the file or below the
// directory resolveDir names ("" for the workspace).
func Grep(ctx context.Context, in GrepArgs, resolveDir func(string) (Loc, error)) (string, error) {
	re, err := grepPattern(in)
	if err != nil {
		return "", err
	}
	l, err := resolveDir(in.Path)
	if err != nil {
		return "", err
	}
	r, err := l.Open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	g := &grepper{re: re, limit: limitOr(in.MaxResults, grepDefaultMax), r: r, l: l}
	st, err := r.Stat(l.Rel)
	if err != nil {
		return "", l.Fail(err)
	}
	if st.IsDir() {
		err = g.walk(ctx, in.Glob)
	} else {
		err = g.file(ctx, l.Rel)
	}
	if err != nil && err != fs.SkipAll {
		return "", err
	}
	if len(g.out) == 0 {
		return fmt.Sprintf("No matches for %q in %s.", in.Pattern, l.Path), nil
	}
	res := strings.Join(g.out, "\n")
	if g.more {
		res += fmt.Sprintf("\n[more matches exist beyond the first %d; narrow the pattern, path or glob, or raise max_results]", g.limit)
	}
	return res, nil
}

// grepPattern is the regular expression grep looks for, once in's glob
// is known to be valid too.
func grepPattern(in GrepArgs) (*regexp.Regexp, error) {
	expr := in.Pattern
	if in.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if !in.CaseSensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil || in.Pattern == "" {
		return nil, fmt.Errorf("pattern is not a valid regular expression (RE2 syntax; set literal=true to search for plain text): %v", err)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return nil, fmt.Errorf("glob %q is not a valid pattern", in.Glob)
	}
	return re, nil
}

// grepper collects the matching lines of the files below l, up to limit.
type grepper struct {
	re    *regexp.Regexp
	limit int
	r     *os.Root
	l     Loc
	out   []string
	more  bool // lines beyond limit matched
}

// walk searches every regular file below l that glob lets in, skipping
// unreadable directories and .git and node_modules.
func (g *grepper) walk(ctx context.Context, glob string) error {
	return fs.WalkDir(g.r.FS(), g.l.Rel, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // unreadable directory: skip it
		case d.IsDir():
			if p != g.l.Rel && (d.Name() == ".git" || d.Name() == "node_modules") {
				return fs.SkipDir
			}
			return nil
		case !d.Type().IsRegular() || !globMatch(glob, below(p, g.l.Rel)):
			return nil
		}
		return g.file(ctx, p)
	})
}

// file searches the file at rel, unless it vanished, is unreadable, too
// large or binary. It returns fs.SkipAll once limit lines are found.
func (g *grepper) file(ctx context.Context, rel string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := OpenRead(g.r, rel)
	if err != nil {
		return nil // vanished or unreadable: skip
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > grepMaxFile {
		return nil
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(sniffBytes); bytes.IndexByte(head, 0) >= 0 {
		return nil
	}
	virtual := g.l.Child(below(rel, g.l.Rel)).Path
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && g.re.Match(line) {
			if len(g.out) == g.limit {
				g.more = true
				return fs.SkipAll
			}
			text := strings.TrimRight(string(line), "\r\n")
			if cut := truncate.Prefix(text, grepLineChars); len(cut) < len(text) {
				text = cut + " …"
			}
			g.out = append(g.out, fmt.Sprintf("%s:%d: %s", virtual, n, text))
		}
		if err != nil { // io.EOF or a read error: the file is done
			return nil
		}
	}
}

// globMatch matches a grep file filter: patterns without '/' match the
// file name, others the path below the search directory.
func globMatch(pattern, rel string) bool {
	if pattern == "" {
		return true
	}
	if !strings.Contains(pattern, "/") {
		rel = path.Base(rel)
	}
	ok, _ := doublestar.Match(pattern, rel)
	return ok
}
