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
	"syscall"
	"time"
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
	missing             string // why it cannot work here, or ""
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
	slirp *exec.Cmd
	exitW *os.File
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
	hostAddrs := localAddrs()
	rules := Rules(resolve(ctx, n.resolver, n.allow), hostAddrs)
	if err := n.applyRules(ctx, pid, rules); err != nil {
		return nil, err
	}
	return n.startSlirp(ctx, pid)
}

// applyRules loads rules into pid's network namespace, entering its user
// namespace too when it has its own (where we hold the capabilities the
// sandboxed command was denied).
func (n *Network) applyRules(ctx context.Context, pid int, rules string) error {
	args := []string{"--target", strconv.Itoa(pid), "--net"}
	if ownUserNS(pid) {
		args = append(args, "--user", "--preserve-credentials")
	}
	cmd := exec.CommandContext(ctx, n.nsenter, append(args, n.nft, "-f", "-")...)
	cmd.Stdin = strings.NewReader(rules)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nftables: %v: %s", err, clip(string(out)))
	}
	return nil
}

// startSlirp runs slirp4netns for pid and waits until tap0 is configured.
func (n *Network) startSlirp(ctx context.Context, pid int) (*Link, error) {
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer readyR.Close()
	exitR, exitW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return nil, err
	}
	var stderr strings.Builder
	cmd := exec.Command(n.slirp, "--configure", "--mtu=65520", "--disable-host-loopback",
		"--ready-fd=3", "--exit-fd=4", strconv.Itoa(pid), "tap0")
	cmd.ExtraFiles = []*os.File{readyW, exitR}
	cmd.Stderr = &limitedWriter{b: &stderr, n: 2000}
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	readyW.Close()
	exitR.Close()
	if err != nil {
		exitW.Close()
		return nil, fmt.Errorf("slirp4netns: %w", err)
	}
	l := &Link{slirp: cmd, exitW: exitW}
	if dl, ok := ctx.Deadline(); ok {
		readyR.SetReadDeadline(dl)
	}
	b := make([]byte, 1)
	if _, err := readyR.Read(b); err != nil {
		l.Close()
		return nil, fmt.Errorf("slirp4netns did not start: %v: %s", err, clip(stderr.String()))
	}
	return l, nil
}

// Close stops the network; the namespace is usually gone already.
func (l *Link) Close() {
	if l == nil {
		return
	}
	l.exitW.Close()
	_ = l.slirp.Process.Kill()
	_ = l.slirp.Wait()
}

// ownUserNS reports whether pid lives in a user namespace other than ours.
func ownUserNS(pid int) bool {
	theirs, err1 := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/user")
	ours, err2 := os.Readlink("/proc/self/ns/user")
	return err1 == nil && err2 == nil && theirs != ours
}

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
