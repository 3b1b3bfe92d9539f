package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/sandbox/files"

	"github.com/deerflow/deerflow/tools"
)

// maxPathLen bounds a virtual path argument.
const maxPathLen = 4096

// validThreadID reports whether id is 1 to 64 letters, digits, '-' or
// '_'. (A loop rather than a regexp: compiling ^[A-Za-z0-9_-]{1,64}$ cost
// every start 0.1 ms and 60 KB of heap.)
func validThreadID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// area is one tree the sandbox exposes: a virtual directory backed by a
// host directory.
type area struct {
	virtual  string
	host     string
	readOnly bool
}

// thread is one conversation's view of the sandbox.
type thread struct {
	m        *Manager
	id       string
	userData string // host directory shown at /mnt/user-data
	areas    []area // longest virtual path first
	scrubs   []scrub
}

// loc is a resolved virtual path: a file or directory inside one area.
type loc struct {
	area
	rel  string // slash-separated path inside area.host, "." for its top
	path string // the cleaned virtual path
}

// files is l as package files takes it.
func (l loc) files() files.Loc {
	return files.Loc{Virtual: l.virtual, Host: l.host, Rel: l.rel, Path: l.path}
}

// fail turns a filesystem error into a sentence for the model, naming only
// the virtual path.
func (l loc) fail(err error) error { return l.files().Fail(err) }

// threadFrom returns the thread of the tool call in ctx.
func (m *Manager) threadFrom(ctx context.Context) (*thread, error) {
	return m.thread(tools.EnvFrom(ctx).ThreadID)
}

// thread returns the sandbox of thread id, creating its directories.
func (m *Manager) thread(id string) (*thread, error) {
	if !validThreadID(id) {
		return nil, errors.New("this tool needs a conversation workspace, and this call has no valid thread id")
	}
	t := &thread{m: m, id: id, userData: filepath.Join(m.threadsDir, id, "user-data")}
	if err := os.MkdirAll(t.userData, 0o700); err != nil {
		return nil, errors.New("the conversation workspace could not be created")
	}
	for _, d := range []string{"workspace", "uploads", "outputs"} {
		// Mkdir, not MkdirAll: never follow a link the sandbox put here.
		if err := os.Mkdir(filepath.Join(t.userData, d), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, errors.New("the conversation workspace could not be created")
		}
	}
	t.areas = append(t.areas, area{virtual: UserData, host: t.userData})
	for _, sk := range m.skills {
		t.areas = append(t.areas, area{virtual: sk.Path, host: sk.HostPath, readOnly: true})
	}
	for _, mt := range m.mounts {
		t.areas = append(t.areas, area{virtual: mt.Path, host: mt.HostPath, readOnly: mt.ReadOnly})
	}
	slices.SortFunc(t.areas, func(a, b area) int { return len(b.virtual) - len(a.virtual) })
	t.scrubs = m.scrubsFor(t)
	return t, nil
}

// roots lists the virtual trees, for error messages.
func (t *thread) roots() string {
	s := "/mnt/user-data/workspace, /mnt/user-data/uploads, /mnt/user-data/outputs"
	for _, sk := range t.m.skills {
		s += ", " + sk.Path + " (read-only)"
	}
	for _, mt := range t.m.mounts {
		s += ", " + mt.Path
		if mt.ReadOnly {
			s += " (read-only)"
		}
	}
	return s
}

// resolve turns a path from the model into a location. Relative paths are
// relative to the workspace; ".." is refused outright, so the only way out
// of a tree would be a symlink, which os.Root refuses when opening.
func (t *thread) resolve(p string) (loc, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return loc{}, errors.New("the path is empty")
	case strings.IndexByte(p, 0) >= 0:
		return loc{}, errors.New("the path contains a NUL byte")
	case len(p) > maxPathLen:
		return loc{}, fmt.Errorf("the path is too long (%d characters; the limit is %d)", len(p), maxPathLen)
	}
	if !strings.HasPrefix(p, "/") {
		p = Workspace + "/" + p
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		return loc{}, fmt.Errorf("paths may not contain '..'; use an absolute path under %s", t.roots())
	}
	p = path.Clean(p)
	for _, a := range t.areas {
		if within(p, a.virtual) {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, a.virtual), "/")
			if rel == "" {
				rel = "."
			}
			return loc{area: a, rel: rel, path: p}, nil
		}
	}
	// The path is not echoed: it may be a host path.
	return loc{}, fmt.Errorf("that path is outside the sandbox; files are reachable only under %s (relative paths are relative to %s)", t.roots(), Workspace)
}

// resolveDir is resolve with the workspace as the default.
func (t *thread) resolveDir(p string) (loc, error) {
	if strings.TrimSpace(p) == "" {
		p = Workspace
	}
	return t.resolve(p)
}

// at is resolve for package files.
func (t *thread) at(p string) (files.Loc, error) {
	l, err := t.resolve(p)
	return l.files(), err
}

// dirAt is resolveDir for package files.
func (t *thread) dirAt(p string) (files.Loc, error) {
	l, err := t.resolveDir(p)
	return l.files(), err
}

// writableAt is at for a tool that writes: an error when p is in a
// read-only area.
func (t *thread) writableAt(p string) (files.Loc, error) {
	l, err := t.resolve(p)
	if err != nil {
		return files.Loc{}, err
	}
	if l.readOnly {
		return files.Loc{}, fmt.Errorf("%s is read-only (it is inside %s); write to %s instead", l.path, l.virtual, Outputs)
	}
	return l.files(), nil
}

// openRead opens a file for reading without blocking on a FIFO the
// sandbox may have put in its place; callers check that it is regular.
func openRead(r *os.Root, rel string) (*os.File, error) { return files.OpenRead(r, rel) }

// openSub opens userData/dir (uploads or outputs) as an os.Root. The
// sandbox can replace that directory with a symlink, even one to "/"; a
// symlink is refused, so nothing else is reachable through it.
func openSub(userData, dir string) (*os.Root, error) {
	ud, err := os.OpenRoot(userData)
	if err != nil {
		return nil, err
	}
	defer ud.Close()
	st, err := ud.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return ud.OpenRoot(dir)
}

// scrub replaces one host prefix with what the model may see.
type scrub struct{ host, shown string }

// scrubsFor lists the host prefixes to hide for t, longest first, both as
// given and with symlinks resolved.
func (m *Manager) scrubsFor(t *thread) []scrub {
	s := append([]scrub{
		{t.userData, UserData},
		{filepath.Join(m.realThreads, t.id, "user-data"), UserData},
	}, m.scrubs...)
	slices.SortStableFunc(s, func(a, b scrub) int { return len(b.host) - len(a.host) })
	return s
}

// sharedScrubs lists the host prefixes every thread hides: skills, mounts
// and the data dir itself.
func (m *Manager) sharedScrubs() []scrub {
	var s []scrub
	add := func(host, shown string) {
		for _, h := range []string{host, realPath(host)} {
			if len(h) > 1 {
				s = append(s, scrub{h, shown})
			}
		}
	}
	for _, sk := range m.skills {
		add(sk.HostPath, sk.Path)
	}
	for _, mt := range m.mounts {
		add(mt.HostPath, mt.Path)
	}
	add(m.dataDir, "[host data dir]")
	return s
}

func realPath(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p
	}
	return r
}

// hide replaces host prefixes in s. A prefix counts only at a path boundary
// (followed by '/', the end, or a character that cannot continue a name).
func (t *thread) hide(s string) string {
	for _, sc := range t.scrubs {
		if !strings.Contains(s, sc.host) {
			continue
		}
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, sc.host)
			if i < 0 {
				break
			}
			end := i + len(sc.host)
			b.WriteString(rest[:i])
			if end == len(rest) || !isNameByte(rest[end]) {
				b.WriteString(sc.shown)
			} else {
				b.WriteString(sc.host)
			}
			rest = rest[end:]
		}
		b.WriteString(rest)
		s = b.String()
	}
	return s
}

func isNameByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' || c >= 0x80 ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// hideErr is hide for an error.
func (t *thread) hideErr(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(t.hide(err.Error()))
}

// tool builds a sandbox tool: it finds the thread of the call and scrubs
// host paths from whatever comes back.
func tool[In any](m *Manager, name, desc string, run func(ctx context.Context, t *thread, in In) (string, error)) tools.Tool {
	return tools.Func(name, desc, func(ctx context.Context, in In) (string, error) {
		t, err := m.threadFrom(ctx)
		if err != nil {
			return "", err
		}
		out, err := run(ctx, t, in)
		return t.hide(out), t.hideErr(err)
	})
}
