package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/deerflow/deerflow/tools"
)

// fuzzSandbox is a thread whose trees hold files, directories and
// symbolic links that lead out (to /etc, up the tree, to the data dir) or
// stay in, with read-only skills (two areas, one inside the other) and
// two mounts.
type fuzzSandbox struct {
	m     *Manager
	th    *thread
	hosts []string // every host directory behind a virtual tree
}

func newFuzzSandbox(tb testing.TB) *fuzzSandbox {
	tb.Helper()
	skills, custom, data, shared := tb.TempDir(), tb.TempDir(), tb.TempDir(), tb.TempDir()
	m := newManager(tb, Options{
		SkillsDir: skills,
		SkillDirs: []Mount{{HostPath: custom, Path: "/mnt/skills/custom"}},
		Mounts:    []Mount{{HostPath: data, Path: "/mnt/data", ReadOnly: true}, {HostPath: shared, Path: "/opt/shared"}},
		BwrapPath: "/nonexistent/bwrap", // no bash: not needed here
	})
	th, err := m.thread("t1")
	if err != nil {
		tb.Fatal(err)
	}
	ws := filepath.Join(th.userData, "workspace")
	writeHost(tb, filepath.Join(ws, "a.txt"), "a")
	writeHost(tb, filepath.Join(ws, "sub", "b.txt"), "b")
	writeHost(tb, filepath.Join(th.userData, "outputs", "report.md"), "r")
	writeHost(tb, filepath.Join(th.userData, "uploads", "in.csv"), "x")
	writeHost(tb, filepath.Join(skills, "pdf", "SKILL.md"), "s")
	writeHost(tb, filepath.Join(custom, "mine", "SKILL.md"), "c")
	writeHost(tb, filepath.Join(data, "x.csv"), "d")
	for name, target := range map[string]string{
		filepath.Join(ws, "out"):                    "/etc",
		filepath.Join(ws, "up"):                     "../../../..",
		filepath.Join(ws, "data"):                   m.dataDir,
		filepath.Join(ws, "in"):                     "sub",
		filepath.Join(ws, "loop"):                   "loop",
		filepath.Join(th.userData, "outputs", "pw"): "/etc/passwd",
		filepath.Join(th.userData, "outputs", "ws"): "../workspace/a.txt",
		filepath.Join(skills, "evil"):               "/",
		filepath.Join(shared, "home"):               os.Getenv("HOME"),
	} {
		if err := os.Symlink(target, name); err != nil {
			tb.Fatal(err)
		}
	}
	return &fuzzSandbox{m: m, th: th, hosts: []string{th.userData, skills, custom, data, shared}}
}

// pathSeeds are paths a model (or someone steering it) might pass.
var pathSeeds = []string{
	"notes.md", "./a//b/", "a.txt", "sub/b.txt", "in/b.txt", "out/passwd", "up/etc/passwd", "data/deerflow.db", "loop/x",
	"/mnt/user-data", "/mnt/user-data/workspace/a.txt", " /mnt/user-data/outputs/report.md ", "/mnt/user-data/uploads/in.csv",
	"/mnt/user-data/outputs/pw", "/mnt/user-data/outputs/ws", "/mnt/skills/pdf/SKILL.md", "/mnt/skills/custom/mine/SKILL.md",
	"/mnt/skills/evil/etc/passwd", "/mnt/data/x.csv", "/opt/shared", "/opt/shared/home/.bashrc",
	"../x", "..", "...", "/mnt/user-data/workspace/../../../etc/passwd", "/mnt/user-data/workspace/..",
	"/mnt/user-data/./workspace/.//a.txt", "..\\..\\etc\\passwd", "a\\..\\..\\b", "/mnt/user-datax/a", "/mnt", "/", "//",
	"/etc/passwd", "~/x", "$HOME/x", "a\x00b", "/mnt/user-data/workspace/a.txt\x00.png", "\u202Etxt.exe", "a\u200Bb",
	"/mnt/user-data/work\u0000space", "\xff\xfe", "/mnt/skills/../user-data/outputs", "file:///etc/passwd",
	strings.Repeat("a/", 2100), strings.Repeat("../", 50) + "etc",
}

// FuzzResolve checks virtual path resolution: a path with a ".." element,
// a NUL or over 4096 bytes, or outside every tree is refused; anything
// else resolves to the tree it names (the innermost, for nested ones),
// with a clean virtual path and a local relative path whose host path
// stays in that tree's host directory. Errors name no host path. Opening
// what it resolves to, through the tree's os.Root, never reaches a file
// outside the tree even with the links set up to lead out; present only
// ever delivers files inside outputs.
func FuzzResolve(f *testing.F) {
	for _, p := range pathSeeds {
		f.Add(p)
	}
	s := newFuzzSandbox(f)
	areas := s.th.areas
	f.Fuzz(func(t *testing.T, p string) {
		l, err := s.th.resolve(p)
		trimmed := strings.TrimSpace(p)
		abs := trimmed
		if !strings.HasPrefix(abs, "/") {
			abs = Workspace + "/" + abs
		}
		refused := trimmed == "" || strings.IndexByte(trimmed, 0) >= 0 || len(trimmed) > maxPathLen ||
			slices.Contains(strings.Split(abs, "/"), "..")
		inside := slices.ContainsFunc(areas, func(a area) bool { return within(path.Clean(abs), a.virtual) })
		if err != nil {
			if !refused && inside {
				t.Fatalf("resolve(%q) refused a path inside the sandbox: %v", p, err)
			}
			s.noHostPath(t, err.Error())
			return
		}
		switch {
		case refused || !inside:
			t.Fatalf("resolve(%q) = %+v; it should be refused", p, l)
		case l.path != path.Clean(abs) || !path.IsAbs(l.path) || slices.Contains(strings.Split(l.path, "/"), ".."):
			t.Fatalf("resolve(%q): virtual path %q", p, l.path)
		case l.rel != "." && (!filepath.IsLocal(l.rel) || slices.Contains(strings.Split(l.rel, "/"), "..")):
			t.Fatalf("resolve(%q): relative path %q leaves its tree", p, l.rel)
		case !within(l.path, l.virtual):
			t.Fatalf("resolve(%q): %q is not in tree %q", p, l.path, l.virtual)
		}
		for _, a := range areas { // the innermost tree that holds the path
			if within(l.path, a.virtual) {
				if a != l.area {
					t.Fatalf("resolve(%q): tree %q, want %q", p, l.virtual, a.virtual)
				}
				break
			}
		}
		if rel, err := filepath.Rel(l.host, l.files().HostPath()); err != nil || !filepath.IsLocal(rel) && rel != "." {
			t.Fatalf("resolve(%q): host path %q is outside %q", p, l.files().HostPath(), l.host)
		}
		s.openInside(t, l)
		if files, err := s.th.present([]string{p}); err == nil {
			for _, pf := range files {
				outputs := filepath.Join(s.th.userData, "outputs")
				if !within(pf.VirtualPath, Outputs) || !strings.HasPrefix(pf.HostPath, outputs+string(filepath.Separator)) {
					t.Fatalf("present(%q) delivers %q (%q)", p, pf.VirtualPath, pf.HostPath)
				}
				if file, err := pf.Open(); err == nil {
					s.checkReal(t, p, file, outputs)
					file.Close()
				}
			}
		} else {
			s.noHostPath(t, err.Error())
		}
	})
}

// openInside opens what l names through its tree's os.Root and checks,
// from the kernel's view of the open file, that it lies inside the tree.
func (s *fuzzSandbox) openInside(t *testing.T, l loc) {
	r, err := l.files().Open()
	if err != nil {
		t.Fatalf("open tree %s: %v", l.virtual, err)
	}
	defer r.Close()
	file, err := openRead(r, l.rel)
	if err != nil {
		s.noHostPath(t, l.fail(err).Error())
		return
	}
	defer file.Close()
	s.checkReal(t, l.path, file, l.host)
}

func (s *fuzzSandbox) checkReal(t *testing.T, p string, file *os.File, host string) {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(file.Fd())))
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	root := realPath(host)
	if real != root && !strings.HasPrefix(real, root+"/") {
		t.Fatalf("%q opened %q, outside %q", p, real, root)
	}
}

func (s *fuzzSandbox) noHostPath(t *testing.T, msg string) {
	for _, h := range append([]string{s.m.dataDir}, s.hosts...) {
		if strings.Contains(msg, h) {
			t.Fatalf("host path %q in %q", h, msg)
		}
	}
}

// FuzzHide checks the scrubbing of tool output: wherever a host directory
// of the thread (data dir, user data, skills, mounts) appears as a path of
// its own (not the start of a longer name), it is replaced, so no host
// path reaches the model.
func FuzzHide(f *testing.F) {
	s := newFuzzSandbox(f)
	for _, h := range s.hosts {
		f.Add("ls: cannot access '" + h + "/x': No such file\n" + h + "\n" + h + "x " + h + "/../..")
	}
	f.Add("error at " + s.m.dataDir + "/threads/t1/user-data/workspace/a.txt:3")
	f.Add("plain text with /mnt/user-data/workspace/a.txt")
	f.Fuzz(func(t *testing.T, out string) {
		got := s.th.hide(out)
		for _, sc := range s.th.scrubs {
			for rest := got; ; {
				i := strings.Index(rest, sc.host)
				if i < 0 {
					break
				}
				end := i + len(sc.host)
				if end == len(rest) || !isNameByte(rest[end]) {
					t.Fatalf("hide left host path %q in %q", sc.host, got)
				}
				rest = rest[i+1:]
			}
		}
		if !strings.Contains(out, s.m.dataDir) && !slices.ContainsFunc(s.th.scrubs, func(sc scrub) bool { return strings.Contains(out, sc.host) }) && got != out {
			t.Fatalf("hide changed text without host paths: %q → %q", out, got)
		}
	})
}

// FuzzSanitizeName checks the names uploads are saved under: one local
// path element (no separators, not "." or "..", no leading dot), no
// control or invisible formatting characters, valid UTF-8, at most 200
// bytes plus a short extension, never empty, nothing that could open or
// close a prompt section; a plain name is kept.
func FuzzSanitizeName(f *testing.F) {
	for _, s := range []string{
		"report.pdf", "../../etc/passwd", `..\..\windows\system32\cmd.exe`, ".bashrc", "...", ". .", "a\x00b.txt",
		"invoice\u202Efdp.exe", "a\u200Bb\uFEFF.png", "\xff\xfe.txt", "   ", "/", "C:\\x\\y.doc", "名前.txt",
		strings.Repeat("é", 300) + ".tar.gz", strings.Repeat("x", 250) + "." + strings.Repeat("y", 30),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := sanitizeName(name)
		ext := filepath.Ext(got)
		switch {
		case got == "" || got == "." || got == ".." || strings.HasPrefix(got, "."):
			t.Fatalf("sanitizeName(%q) = %q", name, got)
		case strings.ContainsAny(got, `/\`) || !filepath.IsLocal(got) || filepath.Base(got) != got:
			t.Fatalf("sanitizeName(%q) = %q: not one path element", name, got)
		case !utf8.ValidString(got):
			t.Fatalf("sanitizeName(%q) = %q: invalid UTF-8", name, got)
		case len(got) > maxNameBytes+len(ext) || len(got) > maxNameBytes+20:
			t.Fatalf("sanitizeName(%q) = %q: %d bytes", name, got, len(got))
		case strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }):
			t.Fatalf("sanitizeName(%q) = %q: control or formatting characters", name, got)
		case tools.Escape(got) != got:
			t.Fatalf("sanitizeName(%q) = %q: could open or close a prompt section", name, got)
		}
		plain := len(name) <= maxNameBytes && !strings.HasPrefix(name, ".") && strings.TrimSpace(name) == name &&
			tools.Escape(name) == name &&
			!strings.ContainsFunc(name, func(r rune) bool {
				return r == '/' || r == '\\' || r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
			})
		if plain && name != "" && got != name {
			t.Fatalf("sanitizeName(%q) = %q; the name was fine", name, got)
		}
	})
}
