package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/deerflow/deerflow/tools"
)

const (
	globDefaultMax = 200
	grepDefaultMax = 100
	resultsCeiling = 1000
	grepMaxFile    = 16 << 20 // larger files are skipped
	grepLineChars  = 300
)

type lsArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are listing, in a few words."`
	Path        string `json:"path,omitempty" desc:"Directory to list, as an absolute virtual path or relative to /mnt/user-data/workspace. Default: /mnt/user-data/workspace."`
}

func (m *Manager) lsTool() tools.Tool {
	return tool(m, "ls",
		"List a directory as a tree two levels deep. Directories end with '/', files show their size.",
		func(ctx context.Context, t *thread, in lsArgs) (string, error) {
			l, err := t.resolveDir(in.Path)
			if err != nil {
				return "", err
			}
			return ls(l)
		})
}

func ls(l loc) (string, error) {
	r, err := l.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	st, err := r.Stat(l.rel)
	if err != nil {
		return "", l.fail(err)
	}
	if !st.IsDir() {
		return fmt.Sprintf("%s (%s)", l.path, size(st.Size())), nil
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(l.path, "/") + "/\n")
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
				fmt.Fprintf(&b, "%s%s -> %s\n", indent, name, l.linkTarget(target))
			case e.IsDir():
				fmt.Fprintf(&b, "%s%s/\n", indent, name)
				if depth < 2 {
					if err := walk(child, indent+"  ", depth+1); err != nil {
						fmt.Fprintf(&b, "%s  (cannot list: %v)\n", indent, l.child(child).fail(err))
					}
				}
			default:
				if info, err := e.Info(); err == nil {
					fmt.Fprintf(&b, "%s%s (%s)\n", indent, name, size(info.Size()))
				} else {
					fmt.Fprintf(&b, "%s%s\n", indent, name)
				}
			}
			if b.Len() > 4*lsMaxChars {
				return nil // enough to fill the limit
			}
		}
		return nil
	}
	if err := walk(l.rel, "  ", 1); err != nil {
		return "", l.fail(err)
	}
	out := strings.TrimRight(b.String(), "\n")
	return headTruncate(out, lsMaxChars, "List a subdirectory, or use glob to find particular files."), nil
}

// linkTarget shows a symlink's target when it stays in the sandbox's
// terms: relative without "..", or a virtual path. Anything else could be
// a host path.
func (l loc) linkTarget(target string) string {
	if strings.HasPrefix(target, "/") {
		for _, v := range []string{UserData, Skills, l.virtual} {
			if within(target, v) {
				return target
			}
		}
	} else if target != "" && !slices.Contains(strings.Split(target, "/"), "..") {
		return target
	}
	return "(a link outside the sandbox)"
}

// size formats a byte count for people.
func size(n int64) string {
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

type globArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are searching, in a few words."`
	Pattern     string `json:"pattern" desc:"Glob pattern relative to path, e.g. **/*.py or data/*.csv (** matches any number of directories, {a,b} alternatives)."`
	Path        string `json:"path,omitempty" desc:"Directory to search in. Default: /mnt/user-data/workspace."`
	IncludeDirs bool   `json:"include_dirs,omitempty" desc:"Also return matching directories, not only files."`
	MaxResults  int    `json:"max_results,omitempty" desc:"Most paths to return. Default 200."`
}

func (m *Manager) globTool() tools.Tool {
	return tool(m, "glob",
		"Find files whose paths match a glob pattern. Returns virtual paths, one per line.",
		func(ctx context.Context, t *thread, in globArgs) (string, error) {
			return glob(ctx, t, in)
		})
}

func glob(ctx context.Context, t *thread, in globArgs) (string, error) {
	pattern, dir := strings.TrimSpace(in.Pattern), in.Path
	if strings.HasPrefix(pattern, "/") { // an absolute pattern names its own directory
		dir, pattern = doublestar.SplitPattern(pattern)
	}
	if pattern == "" || !doublestar.ValidatePattern(pattern) || slices.Contains(strings.Split(pattern, "/"), "..") {
		return "", fmt.Errorf("%q is not a valid glob pattern (use patterns like **/*.md; '..' is not allowed)", in.Pattern)
	}
	l, err := t.resolveDir(dir)
	if err != nil {
		return "", err
	}
	r, err := l.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	if st, err := r.Stat(l.rel); err != nil {
		return "", l.fail(err)
	} else if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", l.path)
	}
	fsys, err := fs.Sub(r.FS(), l.rel)
	if err != nil {
		return "", l.fail(err)
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
			found = append(found, path.Join(l.path, p))
		}
		return nil
	}, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", l.fail(err)
	}
	if total == 0 {
		return fmt.Sprintf("No paths match %s in %s.", pattern, l.path), nil
	}
	out := strings.Join(found, "\n")
	if total > len(found) {
		out += fmt.Sprintf("\n[%s more matches not shown (%s in all); narrow the pattern or raise max_results]", thousands(total-len(found)), thousands(total))
	}
	return out, nil
}

func limitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return min(n, resultsCeiling)
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

type grepArgs struct {
	Description   string `json:"description,omitempty" desc:"Why you are searching, in a few words."`
	Pattern       string `json:"pattern" desc:"Regular expression (RE2 syntax) to look for, line by line."`
	Path          string `json:"path,omitempty" desc:"File or directory to search. Default: /mnt/user-data/workspace."`
	Glob          string `json:"glob,omitempty" desc:"Only search files matching this glob, e.g. *.py (matched against the file name) or src/**/*.go (matched against the path below path)."`
	Literal       bool   `json:"literal,omitempty" desc:"Treat pattern as plain text, not a regular expression."`
	CaseSensitive bool   `json:"case_sensitive,omitempty" desc:"Match case exactly. Default: case-insensitive."`
	MaxResults    int    `json:"max_results,omitempty" desc:"Most matching lines to return. Default 100."`
}

func (m *Manager) grepTool() tools.Tool {
	return tool(m, "grep",
		"Search file contents for a pattern. Returns matching lines as path:line: text. Binary files, files over 16 MB and .git and node_modules directories are skipped.",
		func(ctx context.Context, t *thread, in grepArgs) (string, error) {
			return grep(ctx, t, in)
		})
}

func grep(ctx context.Context, t *thread, in grepArgs) (string, error) {
	expr := in.Pattern
	if in.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if !in.CaseSensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil || in.Pattern == "" {
		return "", fmt.Errorf("pattern is not a valid regular expression (RE2 syntax; set literal=true to search for plain text): %v", err)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return "", fmt.Errorf("glob %q is not a valid pattern", in.Glob)
	}
	l, err := t.resolveDir(in.Path)
	if err != nil {
		return "", err
	}
	r, err := l.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	fsys := r.FS()
	limit := limitOr(in.MaxResults, grepDefaultMax)
	var out []string
	more := false
	searchFile := func(rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := openRead(r, rel)
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
		virtual := l.child(below(rel, l.rel)).path
		for n := 1; ; n++ {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 && re.Match(line) {
				if len(out) == limit {
					more = true
					return fs.SkipAll
				}
				text := strings.TrimRight(string(line), "\r\n")
				if cut := prefixRunes(text, grepLineChars); len(cut) < len(text) {
					text = cut + " …"
				}
				out = append(out, fmt.Sprintf("%s:%d: %s", virtual, n, text))
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return nil
			}
		}
	}
	st, err := r.Stat(l.rel)
	if err != nil {
		return "", l.fail(err)
	}
	if st.IsDir() {
		err = fs.WalkDir(fsys, l.rel, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil // unreadable directory: skip it
			case d.IsDir():
				if p != l.rel && (d.Name() == ".git" || d.Name() == "node_modules") {
					return fs.SkipDir
				}
				return nil
			case !d.Type().IsRegular() || !globMatch(in.Glob, below(p, l.rel)):
				return nil
			}
			return searchFile(p)
		})
	} else {
		err = searchFile(l.rel)
	}
	if err != nil && err != fs.SkipAll {
		return "", err
	}
	if len(out) == 0 {
		return fmt.Sprintf("No matches for %q in %s.", in.Pattern, l.path), nil
	}
	res := strings.Join(out, "\n")
	if more {
		res += fmt.Sprintf("\n[more matches exist beyond the first %d; narrow the pattern, path or glob, or raise max_results]", limit)
	}
	return res, nil
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
