package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// denied are the destinations a sandbox may never reach: loopback (other
// than its own, which never leaves the namespace), private, link-local,
// carrier-grade NAT, multicast and every other non-public range. The
// gateway and resolver slirp4netns provides (10.0.2.2, 10.0.2.3) are
// inside 10.0.0.0/8; the resolver's port 53 is let through before these.
var denied = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("10.0.0.0/8"),      // private, and slirp4netns's own network
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local: cloud metadata services
	netip.MustParsePrefix("172.16.0.0/12"),   // private
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("192.168.0.0/16"),  // private
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("224.0.0.0/3"),     // multicast, reserved, broadcast
	netip.MustParsePrefix("::/127"),          // unspecified and loopback
	netip.MustParsePrefix("::ffff:0:0/96"),   // IPv4-mapped
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fc00::/7"),        // unique local
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("ff00::/8"),        // multicast
}

// Resolver is the DNS server slirp4netns answers on inside the namespace;
// it forwards to the host's resolver.
const Resolver = "10.0.2.3"

// Denied reports whether the rules refuse addr before any exception.
// Only the fixed ranges are known here; this machine's own addresses are
// added per command.
func Denied(addr netip.Addr) bool {
	return slices.ContainsFunc(denied, func(p netip.Prefix) bool { return p.Contains(addr) })
}

// target is a destination the rules let through: every address of
// prefix, on port (0: every port).
type target struct {
	prefix netip.Prefix
	port   uint16
}

// Rules is the nftables ruleset for one sandbox's namespace: its own
// loopback and the resolver, then the exceptions, then a refusal of the
// denied ranges and of this machine's own addresses (hostAddrs); the
// rest (the public internet) passes. TCP is refused with a reset and
// everything else with an ICMP "administratively prohibited", so that a
// refused connection fails at once instead of timing out.
func Rules(allow []target, hostAddrs []netip.Addr) string {
	var b strings.Builder
	b.WriteString("table inet deerflow {\n chain output {\n  type filter hook output priority 0; policy accept;\n")
	b.WriteString("  oifname \"lo\" accept\n")
	fmt.Fprintf(&b, "  ip daddr %s meta l4proto { tcp, udp } th dport 53 accept\n", Resolver)
	for _, t := range allow {
		family := "ip"
		if t.prefix.Addr().Is6() {
			family = "ip6"
		}
		if t.port == 0 {
			fmt.Fprintf(&b, "  %s daddr %s accept\n", family, t.prefix)
		} else {
			fmt.Fprintf(&b, "  %s daddr %s meta l4proto { tcp, udp } th dport %d accept\n", family, t.prefix, t.port)
		}
	}
	for _, p := range refused(hostAddrs) {
		family := "ip"
		if p.Addr().Is6() {
			family = "ip6"
		}
		fmt.Fprintf(&b, "  %s daddr %s meta l4proto tcp reject with tcp reset\n", family, p)
		fmt.Fprintf(&b, "  %s daddr %s reject with icmpx type admin-prohibited\n", family, p)
	}
	b.WriteString(" }\n}\n")
	return b.String()
}

// refused is denied plus each host address that no denied range holds
// already (nftables refuses overlapping elements, and the rules are
// shorter).
func refused(hostAddrs []netip.Addr) []netip.Prefix {
	out := slices.Clone(denied)
	for _, a := range hostAddrs {
		a = a.Unmap().WithZone("")
		if !a.IsValid() || Denied(a) {
			continue
		}
		p := netip.PrefixFrom(a, a.BitLen())
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
