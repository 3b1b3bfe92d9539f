// Package bwrap builds bubblewrap sandboxes: the arguments that show a
// thread's files, the skills and the mounts over a read-only system, a
// process held until its limits and network are in place and killed with
// everything it started, long-running programs isolated alike, and the
// directories a program needs to run in one.
//
// It imports only sandbox/limit and sandbox/egress of ours; package
// sandbox decides when and for whom a sandbox is built.
package bwrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/deerflow/deerflow/sandbox/egress"
	"github.com/deerflow/deerflow/sandbox/limit"
)

// Virtual paths inside every sandbox.
const (
	UserData  = "/mnt/user-data"
	Workspace = UserData + "/workspace"
	// HomeDir is where an isolated program's private home is mounted.
	HomeDir = "/mnt/home"
)

// PATH is the sandbox's PATH.
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

const (
	waitDelay = 5 * time.Second
	// DrainDeadline bounds the wait for output still in a pipe once a
	// command has ended.
	DrainDeadline = 2 * time.Second
)

// SystemDirs are the sandbox's own system paths; mounts may not go inside
// them (the read-only binds cannot take new mount points).
var SystemDirs = []string{"/usr", "/etc", "/proc", "/dev", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// Mount exposes a host directory inside the sandbox.
type Mount struct {
	HostPath string // host directory
	Path     string // virtual path, absolute, e.g. /mnt/data
	ReadOnly bool
}

// Options says what every sandbox of a Jail shows and gets.
type Options struct {
	// Binary is the bubblewrap binary. Required.
	Binary string
	// Shell runs commands: /bin/bash, or /bin/sh without bash.
	Shell string
	// HostNetwork shares the host's network (and its resolv.conf); false
	// gives each sandbox a network namespace of its own.
	HostNetwork bool
	// ResolvConf is a host file shown at /etc/resolv.conf; "" shows none
	// (unless HostNetwork).
	ResolvConf string
	// Skills and Mounts are bound in that order; Skills read-only.
	Skills []Mount
	Mounts []Mount
	// Hide are host paths masked wherever a bind would show them.
	Hide []string
	// Empty is an empty host file, bound over hidden files.
	Empty string
	// Limits puts each sandbox under its limits. Required.
	Limits *limit.Enforcer
	// Egress gives each sandbox the public network; nil gives none.
	Egress *egress.Network
}

// Jail builds bubblewrap sandboxes alike. It is safe for concurrent use.
type Jail struct {
	o      Options
	system []string // systemArgs, found once
}

// New returns a Jail for o, reading the host's system layout once.
func New(o Options) *Jail {
	return &Jail{o: o, system: systemArgs()}
}

// Shell is the shell commands run with.
func (j *Jail) Shell() string { return j.o.Shell }

// WithoutNetwork is j giving its sandboxes no network.
func (j *Jail) WithoutNetwork() *Jail {
	c := *j
	c.o.Egress = nil
	return &c
}

// etcFiles are the parts of the host's /etc a sandboxed command may read:
// what programs need to run (loader cache, Debian alternatives, users),
// resolve names and verify TLS (and matplotlib's rc file, without which
// Debian's matplotlib does not start). Never all of /etc: it holds shadow files,
// host keys and service configs with secrets. Each bind costs bubblewrap
// about 0.2 ms, so the list is short. resolv.conf is the host's only when
// the sandbox shares the host's network.
var etcFiles = []string{
	"alternatives", "crypto-policies", "fonts", "group", "hosts", "ld.so.cache",
	"localtime", "matplotlibrc", "nsswitch.conf", "os-release", "passwd", "pki/ca-trust",
	"pki/tls/certs", "protocols", "services", "ssl/certs", "ssl/openssl.cnf",
}

// systemArgs are the bubblewrap arguments for the read-only system part of
// the sandbox, found once: /usr, the /bin and /lib dirs or their merged-usr
// symlinks, and etcFiles (symlinks into /usr are recreated, which is
// cheaper than a bind).
func systemArgs() []string {
	a := []string{"--ro-bind", "/usr", "/usr"}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
		case st.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case st.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--perms", "0755", "--dir", "/etc")
	for _, f := range etcFiles {
		p := "/etc/" + f
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if st.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(p); err == nil {
				abs := target
				if !filepath.IsAbs(abs) {
					abs = filepath.Join(filepath.Dir(p), target)
				}
				if strings.HasPrefix(filepath.Clean(abs), "/usr/") {
					a = append(a, "--symlink", target, p)
					continue
				}
			}
		}
		a = append(a, "--ro-bind-try", p, p)
	}
	return a
}

// bwrapArgs builds the sandbox: a fresh root holding read-only system
// directories, the thread's user data at /mnt/user-data (userData ""
// makes an empty one, for the probe), skills, mounts and extra binds; new user, pid,
// ipc, uts and network namespaces (the network one shared only with
// sandbox.host_network); no capabilities; sized tmpfs at /tmp and
// /dev/shm. The environment is bubblewrap's own, which the caller sets:
// nothing secret is ever an argument.
func (j *Jail) args(userData string, extra ...string) []string {
	a := []string{
		"--die-with-parent", "--new-session",
		"--unshare-user-try", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL", "--hostname", "sandbox",
	}
	if !j.o.HostNetwork {
		a = append(a, "--unshare-net")
	}
	a = append(a, j.system...)
	switch {
	case j.o.HostNetwork:
		a = append(a, "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf")
	case j.o.ResolvConf != "":
		a = append(a, "--ro-bind", j.o.ResolvConf, "/etc/resolv.conf")
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev")
	a = append(a, j.tmpfs("/dev/shm")...)
	a = append(a, j.tmpfs("/tmp")...)
	a = append(a, "--symlink", "../tmp", "/var/tmp", "--perms", "0755", "--dir", "/mnt")
	if userData == "" {
		a = append(a, "--dir", Workspace)
	} else {
		a = append(a, "--bind", userData, UserData)
	}
	for _, sk := range j.o.Skills {
		a = append(a, "--ro-bind-try", sk.HostPath, sk.Path)
	}
	var shown []Mount
	for _, mt := range j.o.Mounts {
		op := "--bind-try"
		if mt.ReadOnly {
			op = "--ro-bind-try"
		}
		a = append(a, op, mt.HostPath, mt.Path)
		shown = append(shown, mt)
	}
	a = append(a, j.masks(shown)...)
	a = append(a, extra...)
	// The root itself (and /etc, /mnt in it) is a tmpfs bwrap made;
	// read-only, so nothing can be written outside the binds and /tmp.
	return append(a, "--remount-ro", "/", "--chdir", Workspace)
}

// masks hides deerflow's own files (the data dir, the configuration) where
// a bind shows a directory that holds them: an empty tmpfs over a
// directory, an empty file over a file (a bound /dev/null cannot be
// opened: binds are nodev).
func (j *Jail) masks(shown []Mount) []string {
	var a []string
	for _, mt := range shown {
		for _, h := range j.o.Hide {
			rel, err := filepath.Rel(mt.HostPath, h)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			at := filepath.Join(mt.Path, rel)
			if st, err := os.Stat(h); err == nil && !st.IsDir() {
				a = append(a, "--ro-bind", j.o.Empty, at)
			} else if err == nil {
				a = append(a, "--tmpfs", at)
			}
		}
	}
	return a
}

// tmpfs mounts a tmpfs at p, sized by sandbox.limits.tmp_mb.
func (j *Jail) tmpfs(p string) []string {
	if mb := j.o.Limits.Limits().TmpMB; mb > 0 {
		return []string{"--size", strconv.FormatInt(int64(mb)<<20, 10), "--tmpfs", p}
	}
	return []string{"--tmpfs", p}
}

// Env is the whole environment a command gets: nothing inherited, so no
// tokens or keys.
func Env(home, pathVar string) []string {
	return []string{"PATH=" + pathVar, "HOME=" + home, "LANG=C.UTF-8", "TERM=dumb", "TMPDIR=/tmp"}
}

// argsFile holds bubblewrap's arguments for --args, NUL-separated, in an
// anonymous file: arguments on a command line are readable by every
// local user (and, inside the sandbox, in /proc/1/cmdline), and these
// name host paths.
func argsFile(args []string) (*os.File, error) {
	fd, err := unix.MemfdCreate("bwrap-args", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "bwrap-args")
	var b strings.Builder
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			f.Close()
			return nil, errors.New("an argument holds a NUL byte")
		}
		b.WriteString(a)
		b.WriteByte(0)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Probe reports bubblewrap's version after running `true` in a sandbox
// built like the real ones. An error wrapping a *NetworkError is a
// sandbox that works but could not be given its network.
func (j *Jail) Probe(ctx context.Context, version string) (string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer pr.Close()
	p, err := j.Start(ctx, "", []string{j.o.Shell, "-c", "true"}, pw)
	pw.Close()
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(pr, 4096))
		out <- string(b)
	}()
	if err == nil {
		err = p.Cmd.Wait()
		p.Release()
	}
	pr.SetReadDeadline(time.Now().Add(DrainDeadline))
	msg, _, _ := strings.Cut(strings.TrimSpace(<-out), "\n")
	var ne *NetworkError
	switch {
	case errors.As(err, &ne):
		return "", err
	case err != nil && msg != "":
		return "", fmt.Errorf("%w: %s", err, msg)
	case err != nil:
		return "", err
	}
	return strings.TrimSpace(version), nil
}
