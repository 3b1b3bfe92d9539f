package sandbox

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
)

// etcFiles are the parts of the host's /etc a sandboxed command may read:
// what programs need to run (loader cache, Debian alternatives, users),
// resolve names and verify TLS. Never all of /etc: it holds shadow files,
// host keys and service configs with secrets. Each bind costs bubblewrap
// about 0.2 ms, so the list is short. resolv.conf is the host's only when
// the sandbox shares the host's network.
var etcFiles = []string{
	"alternatives", "crypto-policies", "fonts", "group", "hosts", "ld.so.cache",
	"localtime", "nsswitch.conf", "os-release", "passwd", "pki/ca-trust",
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
func (m *Manager) bwrapArgs(r bashRunner, userData string, extra ...string) []string {
	a := []string{
		"--die-with-parent", "--new-session",
		"--unshare-user-try", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL", "--hostname", "sandbox",
	}
	if m.net != netHost {
		a = append(a, "--unshare-net")
	}
	a = append(a, r.system...)
	switch {
	case m.net == netHost:
		a = append(a, "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf")
	case m.resolvConf != "":
		a = append(a, "--ro-bind", m.resolvConf, "/etc/resolv.conf")
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev")
	a = append(a, m.tmpfs("/dev/shm")...)
	a = append(a, m.tmpfs("/tmp")...)
	a = append(a, "--symlink", "../tmp", "/var/tmp", "--perms", "0755", "--dir", "/mnt")
	if userData == "" {
		a = append(a, "--dir", Workspace)
	} else {
		a = append(a, "--bind", userData, UserData)
	}
	for _, sk := range m.skills {
		a = append(a, "--ro-bind-try", sk.HostPath, sk.Path)
	}
	var shown []Mount
	for _, mt := range m.mounts {
		op := "--bind-try"
		if mt.ReadOnly {
			op = "--ro-bind-try"
		}
		a = append(a, op, mt.HostPath, mt.Path)
		shown = append(shown, mt)
	}
	a = append(a, m.masks(shown)...)
	a = append(a, extra...)
	// The root itself (and /etc, /mnt in it) is a tmpfs bwrap made;
	// read-only, so nothing can be written outside the binds and /tmp.
	return append(a, "--remount-ro", "/", "--chdir", Workspace)
}

// masks hides deerflow's own files (the data dir, the configuration) where
// a bind shows a directory that holds them: an empty tmpfs over a
// directory, an empty file over a file (a bound /dev/null cannot be
// opened: binds are nodev).
func (m *Manager) masks(shown []Mount) []string {
	var a []string
	for _, mt := range shown {
		for _, h := range m.hide {
			rel, err := filepath.Rel(mt.HostPath, h)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			at := filepath.Join(mt.Path, rel)
			if st, err := os.Stat(h); err == nil && !st.IsDir() {
				a = append(a, "--ro-bind", filepath.Join(m.dataDir, "empty"), at)
			} else if err == nil {
				a = append(a, "--tmpfs", at)
			}
		}
	}
	return a
}

// tmpfs mounts a tmpfs at p, sized by sandbox.limits.tmp_mb.
func (m *Manager) tmpfs(p string) []string {
	if mb := m.limits.Limits().TmpMB; mb > 0 {
		return []string{"--size", strconv.FormatInt(int64(mb)<<20, 10), "--tmpfs", p}
	}
	return []string{"--tmpfs", p}
}

// sandboxEnv is the whole environment a command gets: nothing inherited,
// so no tokens or keys.
func sandboxEnv(home, pathVar string) []string {
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

// probe reports bubblewrap's version after running `true` in a sandbox
// built like the real ones.
func (m *Manager) probe(ctx context.Context, r bashRunner, version string) (string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer pr.Close()
	p, err := m.start(ctx, r, "", []string{r.shell, "-c", "true"}, pw)
	pw.Close()
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(pr, 4096))
		out <- string(b)
	}()
	if err == nil {
		err = p.cmd.Wait()
		p.release()
	}
	pr.SetReadDeadline(time.Now().Add(drainDeadline))
	msg, _, _ := strings.Cut(strings.TrimSpace(<-out), "\n")
	var ne *networkError
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
