package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// exception is one sandbox.network_allow entry: an address, a prefix or
// a host name, with an optional port.
type exception struct {
	prefix netip.Prefix // valid unless name is set
	name   string       // a host name, resolved at each command
	port   uint16       // 0: every port
}

// ParseAllow reads a network_allow entry: "10.0.0.5", "10.0.0.5:5432",
// "10.0.0.0/24", "db.internal", "db.internal:5432", "fd00::5" or
// "[fd00::5]:443".
func ParseAllow(s string) (exception, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return exception{}, fmt.Errorf("empty entry")
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return exception{prefix: p.Masked()}, nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return exception{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())}, nil
	}
	host, port := s, uint16(0)
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return exception{}, fmt.Errorf("%q: port %q is not a number from 1 to 65535", s, p)
		}
		host, port = h, uint16(n)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return exception{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), port: port}, nil
	}
	if !validName(host) {
		return exception{}, fmt.Errorf("%q is not an address, a prefix or a host name (with an optional :port)", s)
	}
	return exception{name: strings.ToLower(strings.TrimSuffix(host, ".")), port: port}, nil
}

// validName reports whether s looks like a DNS host name.
func validName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// resolve turns the exceptions into targets, looking names up now (a
// name that does not resolve opens nothing).
func resolve(ctx context.Context, r *net.Resolver, ex []exception) []target {
	var out []target
	for _, e := range ex {
		if e.name == "" {
			out = append(out, target{prefix: e.prefix, port: e.port})
			continue
		}
		addrs, err := r.LookupNetIP(ctx, "ip", e.name)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			a = a.Unmap().WithZone("")
			out = append(out, target{prefix: netip.PrefixFrom(a, a.BitLen()), port: e.port})
		}
	}
	return out
}
