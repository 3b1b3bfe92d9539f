package egress

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAllow(t *testing.T) {
	tests := []struct {
		in   string
		want exception
		err  string
	}{
		{in: "10.0.0.5", want: exception{prefix: netip.MustParsePrefix("10.0.0.5/32")}},
		{in: "10.0.0.5:5432", want: exception{prefix: netip.MustParsePrefix("10.0.0.5/32"), port: 5432}},
		{in: "10.1.2.3/16", want: exception{prefix: netip.MustParsePrefix("10.1.0.0/16")}},
		{in: "fd00::5", want: exception{prefix: netip.MustParsePrefix("fd00::5/128")}},
		{in: "[fd00::5]:443", want: exception{prefix: netip.MustParsePrefix("fd00::5/128"), port: 443}},
		{in: "::ffff:10.0.0.7", want: exception{prefix: netip.MustParsePrefix("10.0.0.7/32")}},
		{in: "DB.Internal.", want: exception{name: "db.internal"}},
		{in: "db.internal:5432", want: exception{name: "db.internal", port: 5432}},
		{in: "", err: "empty"},
		{in: "db.internal:0", err: "port"},
		{in: "db.internal:99999", err: "port"},
		{in: "http://db.internal", err: "is not a number"},
		{in: "db.internal/x", err: "not an address"},
		{in: "-bad-.example", err: "not an address"},
		{in: "a b", err: "not an address"},
	}
	for _, tt := range tests {
		got, err := ParseAllow(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseAllow(%q) error = %v, want one saying %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseAllow(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(exception{}), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
			t.Errorf("ParseAllow(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// The attacker's table: every address a sandbox must not reach, written
// the ways an attacker spells them to slip past a filter.
func TestDenied(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1", "127.1.2.3", "0.0.0.0", "10.0.2.2", "10.0.2.3", "10.255.255.255",
		"172.16.0.1", "172.31.255.254", "192.168.1.1", "100.64.0.1", "100.127.255.254",
		"169.254.169.254", "169.254.0.1", "192.0.0.1", "198.18.0.1", "224.0.0.1",
		"255.255.255.255", "240.0.0.1", "::1", "::", "fe80::1", "fd00::1", "fc00::1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "ff02::1", "fec0::1",
	} {
		if !Denied(netip.MustParseAddr(s)) {
			t.Errorf("%s is not denied", s)
		}
	}
	for _, s := range []string{"1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "192.169.0.1"} {
		if Denied(netip.MustParseAddr(s)) {
			t.Errorf("public %s is denied", s)
		}
	}
}

func TestRules(t *testing.T) {
	allow := []target{
		{prefix: netip.MustParsePrefix("10.0.0.5/32"), port: 5432},
		{prefix: netip.MustParsePrefix("fd00::/64")},
	}
	hosts := []netip.Addr{
		netip.MustParseAddr("127.0.0.1"),       // in a denied range already
		netip.MustParseAddr("203.0.113.9"),     // so is this
		netip.MustParseAddr("198.51.99.7"),     // a public address of this machine
		netip.MustParseAddr("2a01:4f8::1"),     // and its public IPv6
		netip.MustParseAddr("::ffff:8.8.4.4"),  // mapped: refused as IPv4
		netip.MustParseAddr("198.51.99.7"),     // listed twice
		netip.MustParseAddr("fe80::1%eth0"),    // zoned link-local
		netip.MustParseAddr("169.254.169.254"), // metadata, on this host
	}
	got := Rules(allow, hosts)
	order := []string{
		`oifname "lo" accept`,
		"ip daddr 10.0.2.3 meta l4proto { tcp, udp } th dport 53 accept",
		"ip daddr 10.0.0.5/32 meta l4proto { tcp, udp } th dport 5432 accept",
		"ip6 daddr fd00::/64 accept",
		"ip daddr 10.0.0.0/8 meta l4proto tcp reject with tcp reset",
		"ip daddr 169.254.0.0/16 reject with icmpx type admin-prohibited",
		"ip6 daddr fe80::/10 reject with icmpx type admin-prohibited",
		"ip daddr 198.51.99.7/32 meta l4proto tcp reject with tcp reset",
		"ip6 daddr 2a01:4f8::1/128 reject with icmpx type admin-prohibited",
		"ip daddr 8.8.4.4/32 reject with icmpx type admin-prohibited",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(got[at:], want)
		if i < 0 {
			t.Fatalf("rules lack %q after position %d:\n%s", want, at, got)
		}
		at += i
	}
	if n := strings.Count(got, "198.51.99.7/32"); n != 2 {
		t.Errorf("the host address appears in %d rules, want 2 (tcp and the rest)", n)
	}
	if strings.Contains(got, "127.0.0.1/32") || strings.Contains(got, "%") {
		t.Errorf("rules repeat a covered address or keep a zone:\n%s", got)
	}
}
