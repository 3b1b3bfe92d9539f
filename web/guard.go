package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// maxRedirects is how many redirects web_fetch follows.
const maxRedirects = 5

// blockedPrefixes are the ranges, beyond what netip.Addr's predicates
// cover, that a fetch must not reach unless private addresses are allowed.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and broadcast
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated)
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001::/32"),      // Teredo (hides an IPv4 address)
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64: IPv4 in the last 32 bits
	sixToFour = netip.MustParsePrefix("2002::/16")    // 6to4: IPv4 in bits 16..47
)

// IsBlockedIP reports whether ip is an address web_fetch refuses to
// connect to unless private addresses are allowed: private, loopback,
// link-local, unspecified, multicast, carrier-grade NAT, unique-local and
// other non-public ranges, including IPv4 addresses embedded in IPv6 ones
// (mapped, NAT64, 6to4).
func IsBlockedIP(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.Unmap().WithZone("")
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			return IsBlockedIP(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(ip):
			return IsBlockedIP(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	return false
}

// blockedError is returned when a connection would reach a blocked
// address.
type blockedError struct {
	url  string // filled in when known
	addr string
}

func (e *blockedError) Error() string {
	if e.url == "" {
		return fmt.Sprintf("refusing to connect: %s is a private or local address", e.addr)
	}
	return fmt.Sprintf("refusing to fetch %s: it resolves to a private or local address (%s)", e.url, e.addr)
}

// dialControl checks the address a socket is about to connect to, after
// DNS resolution, so that neither DNS tricks nor redirects can reach a
// blocked address.
func dialControl(_ context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &blockedError{addr: address}
	}
	if IsBlockedIP(ap.Addr()) {
		return &blockedError{addr: ap.Addr().Unmap().WithZone("").String()}
	}
	return nil
}

// safeTransport is an http.Transport that ignores proxy settings (so the
// address check applies to the real destination) and, unless allowPrivate,
// refuses to connect to blocked addresses.
func safeTransport(allowPrivate bool) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.ControlContext = dialControl
	}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           20,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// PublicClient is an HTTP client held to web_fetch's rules, for tools
// outside this package that follow links they are given: no proxy (so
// the check sees the real destination), every connection's address
// checked after DNS, every redirect re-checked, at most 5 of them.
func PublicClient() *http.Client {
	return &http.Client{Transport: safeTransport(false), CheckRedirect: checkRedirect(false)}
}

// IsBlocked reports whether err is a refusal to reach a private or local
// address (by PublicClient or web_fetch).
func IsBlocked(err error) bool { return errors.As(err, new(*blockedError)) }

// checkURL refuses URLs web_fetch must not fetch: other schemes than http
// and https, URLs carrying a user name or password, URLs without a host,
// and (unless allowPrivate) literal blocked IP addresses. The dialer checks
// the addresses host names resolve to.
func checkURL(u *url.URL, allowPrivate bool) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return refused("refusing to fetch %q: the URL must start with http:// or https://", u.String())
	default:
		return refused("refusing to fetch %s: only http and https URLs can be fetched, not %s", redact(u), u.Scheme)
	}
	if u.User != nil {
		return refused("refusing to fetch %s: URLs with a user name or password are not allowed", redact(u))
	}
	if u.Hostname() == "" {
		return refused("refusing to fetch %q: the URL has no host", redact(u))
	}
	if !allowPrivate {
		if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && IsBlockedIP(ip) {
			return &blockedError{url: redact(u), addr: ip.Unmap().WithZone("").String()}
		}
	}
	return nil
}

// refusedError is a URL checkURL refuses for another reason than its
// address.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

func refused(format string, args ...any) error {
	return &refusedError{msg: fmt.Sprintf(format, args...)}
}

// redact returns u as a string without its password.
func redact(u *url.URL) string {
	return u.Redacted()
}

// errTooManyRedirects is returned by checkRedirect after maxRedirects.
var errTooManyRedirects = errors.New("too many redirects")

// checkRedirect re-checks every redirect target and limits their number.
func checkRedirect(allowPrivate bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return errTooManyRedirects
		}
		return checkURL(req.URL, allowPrivate)
	}
}
