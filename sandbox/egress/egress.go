// Package egress gives a sandbox's network namespace the public internet
// and nothing else. slirp4netns attaches a user-mode network to the
// namespace (its connections leave from this machine, but nothing on the
// host can connect in, and the host's loopback is closed to it), and
// nftables rules inside the namespace refuse this machine's own
// addresses and every private, link-local, carrier-grade NAT and
// reserved range, except the operator's named exceptions. The sandboxed
// command has no capabilities in that namespace, so it cannot change the
// rules.
//
// It imports no package of ours.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Options configures a Network.
type Options struct {
	// Allow are the sandbox.network_allow exceptions (see ParseAllow).
	Allow []string
	// Slirp, Nft and Nsenter are the helper programs; "" looks each up in
	// PATH and the sbin directories.
	Slirp, Nft, Nsenter string
	// Resolver looks up the host names in Allow; nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// Network attaches filtered user-mode networks to sandboxes. It is safe
// for concurrent use.
type Network struct {
	slirp, nft, nsenter string
	allow               []exception
	resolver            *net.Resolver
	missing             string         // why it cannot work here, or ""
	reaping             sync.WaitGroup // links being torn down
}

// New checks the exceptions and finds the helpers. A missing helper is
// not an error: Missing says why the sandbox has no network.
func New(o Options) (*Network, error) {
	n := &Network{resolver: o.Resolver}
	if n.resolver == nil {
		n.resolver = net.DefaultResolver
	}
	for i, s := range o.Allow {
		e, err := ParseAllow(s)
		if err != nil {
			return nil, fmt.Errorf("network_allow[%d]: %w", i, err)
		}
		n.allow = append(n.allow, e)
	}
	var why []string
	for _, h := range []struct {
		dst   *string
		given string
		name  string
		pkg   string
	}{
		{&n.slirp, o.Slirp, "slirp4netns", "slirp4netns"},
		{&n.nft, o.Nft, "nft", "nftables"},
		{&n.nsenter, o.Nsenter, "nsenter", "util-linux"},
	} {
		p, err := lookHelper(h.given, h.name)
		if err != nil {
			why = append(why, fmt.Sprintf("%s not found (install %s)", h.name, h.pkg))
		}
		*h.dst = p
	}
	n.missing = strings.Join(why, "; ")
	return n, nil
}

// Missing says why no network can be attached here, or "" when the
// helpers are all there.
func (n *Network) Missing() string { return n.missing }

// Describe is how the network is built, for status lines.
func (n *Network) Describe() string {
	ex := ""
	if len(n.allow) > 0 {
		ex = fmt.Sprintf(", %d exception(s) from sandbox.network_allow", len(n.allow))
	}
	return "public internet only (slirp4netns user-mode network, nftables refusing this machine's addresses and private, link-local and CGNAT ranges" + ex + ")"
}

// lookHelper finds a helper program: the given path, or name in PATH or
// in the sbin directories (which an unprivileged service's PATH often
// lacks).
func lookHelper(given, name string) (string, error) {
	if given != "" {
		return exec.LookPath(given)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		if p, err := exec.LookPath(d + "/" + name); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Link is a network attached to one sandbox; Close ends it.
type Link struct {
	n      *Network
	slirp  *exec.Cmd // nil once reaped
	exitW  *os.File
	stderr strings.Builder
}

// setupTimeout bounds attaching a network to one sandbox.
const setupTimeout = 10 * time.Second

// Attach gives the network namespace of process pid (the sandbox's pid 1,
// held before its command starts) the filtered network: the rules first
// take effect, then slirp4netns brings up tap0 with the route and the
// resolver. On error nothing is left running; the caller must not let the
// command start.
func (n *Network) Attach(ctx context.Context, pid int) (*Link, error) {
	if n.missing != "" {
		return nil, errors.New(n.missing)
	}
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	ns, err := openNamespaces(pid)
	if err != nil {
		return nil, err
	}
	defer ns.close()
	rules := Rules(resolve(ctx, n.resolver, n.allow), localAddrs())
	// slirp4netns starts while the rules load: nothing in the namespace
	// runs before both are done.
	l, ready, err := n.startSlirp(ns)
	if err != nil {
		return nil, err
	}
	if err := n.applyRules(ctx, ns, rules); err != nil {
		ready.Close()
		l.Close()
		return nil, err
	}
	if err := l.waitReady(ctx, ready); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// namespaces are the network namespace of a sandbox and the user
// namespace that owns it (nil when that is ours, as for root without
// one). The owner is asked of the network namespace itself: the
// sandbox's process may sit in a user namespace nested below it, whose
// capabilities do not reach the network.
type namespaces struct {
	net, user *os.File
}

func openNamespaces(pid int) (*namespaces, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the sandbox's network namespace: %w", err)
	}
	ns := &namespaces{net: os.NewFile(uintptr(fd), "netns")}
	ufd, err := unix.IoctlRetInt(fd, unix.NS_GET_USERNS)
	if err != nil {
		ns.close()
		return nil, fmt.Errorf("the owner of the sandbox's network namespace: %w", err)
	}
	user := os.NewFile(uintptr(ufd), "userns")
	var theirs, ours unix.Stat_t
	if unix.Fstat(ufd, &theirs) == nil && unix.Stat("/proc/self/ns/user", &ours) == nil &&
		theirs.Dev == ours.Dev && theirs.Ino == ours.Ino {
		user.Close()
		return ns, nil
	}
	ns.user = user
	// The sandbox writes its uid map itself, just after it starts; in a
	// user namespace without one our capabilities there do not count.
	mapFile := "/proc/" + strconv.Itoa(pid) + "/uid_map"
	for i := 0; ; i++ {
		if b, err := os.ReadFile(mapFile); err != nil || len(b) > 0 {
			break
		}
		if i == 5000 {
			ns.close()
			return nil, errors.New("the sandbox's user namespace got no uid map")
		}
		time.Sleep(100 * time.Microsecond)
	}
	return ns, nil
}

// files are the namespaces to hand to a helper, as fds 3 (net) and 4
// (user, if any).
func (ns *namespaces) files() []*os.File {
	if ns.user == nil {
		return []*os.File{ns.net}
	}
	return []*os.File{ns.net, ns.user}
}

func (ns *namespaces) close() {
	ns.net.Close()
	if ns.user != nil {
		ns.user.Close()
	}
}

// applyRules loads rules into the sandbox's network namespace, entering
// its owning user namespace too when there is one (we hold every
// capability there; the sandboxed command holds none).
func (n *Network) applyRules(ctx context.Context, ns *namespaces, rules string) error {
	args := []string{"--net=/proc/self/fd/3"}
	if ns.user != nil {
		args = append(args, "--user=/proc/self/fd/4", "--preserve-credentials")
	}
	cmd := exec.CommandContext(ctx, n.nsenter, append(args, n.nft, "-f", "-")...)
	cmd.ExtraFiles = ns.files()
	cmd.Stdin = strings.NewReader(rules)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nftables: %v: %s", err, clip(string(out)))
	}
	return nil
}

// startSlirp starts slirp4netns for the namespace; ready is readable once
// it has configured tap0.
func (n *Network) startSlirp(ns *namespaces) (l *Link, ready *os.File, err error) {
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	exitR, exitW, err := os.Pipe()
	if err != nil {
		readyR.Close()
		readyW.Close()
		return nil, nil, err
	}
	// fds: 3 net, 4 user (or the net one again), 5 ready, 6 exit.
	files := ns.files()
	args := []string{"--configure", "--mtu=65520", "--disable-host-loopback", "--netns-type=path", "--ready-fd=5", "--exit-fd=6"}
	if ns.user != nil {
		args = append(args, "--userns-path=/proc/self/fd/4")
	} else {
		files = append(files, ns.net)
	}
	cmd := exec.Command(n.slirp, append(args, "/proc/self/fd/3", "tap0")...)
	cmd.ExtraFiles = append(files, readyW, exitR)
	l = &Link{n: n, slirp: cmd, exitW: exitW}
	cmd.Stderr = &limitedWriter{b: &l.stderr, n: 2000}
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	readyW.Close()
	exitR.Close()
	if err != nil {
		readyR.Close()
		exitW.Close()
		return nil, nil, fmt.Errorf("slirp4netns: %w", err)
	}
	return l, readyR, nil
}

// waitReady waits for slirp4netns to report tap0 configured.
func (l *Link) waitReady(ctx context.Context, ready *os.File) error {
	defer ready.Close()
	if dl, ok := ctx.Deadline(); ok {
		ready.SetReadDeadline(dl)
	}
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		l.exitW.Close()
		l.slirp.Process.Kill()
		l.slirp.Wait() // for its stderr
		l.slirp = nil
		return fmt.Errorf("slirp4netns did not start: %v: %s", err, clip(l.stderr.String()))
	}
	return nil
}

// Close stops the network; the namespace is usually gone already. It
// does not wait: the kernel takes tens of milliseconds to remove a tap
// device, which no user should wait for. Network.Close waits.
func (l *Link) Close() {
	if l == nil || l.slirp == nil {
		return
	}
	l.exitW.Close()
	_ = l.slirp.Process.Kill()
	l.n.reaping.Add(1)
	go func() {
		defer l.n.reaping.Done()
		_ = l.slirp.Wait()
	}()
}

// Close waits until every closed link's helper has exited.
func (n *Network) Close() { n.reaping.Wait() }

// localAddrs are this machine's own addresses, which a sandbox must not
// reach whatever range they are in.
func localAddrs() []netip.Addr {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range ifaddrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out
}

// clip shortens helper output for an error message.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	b *strings.Builder
	n int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.n - w.b.Len(); room > 0 {
		w.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
