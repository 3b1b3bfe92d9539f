package web

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestIsBlockedIP(t *testing.T) {
	blocked := []string{
		"127.0.0.1", "127.1.2.3", "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255",
		"192.168.1.1", "169.254.169.254", "100.64.0.1", "100.127.255.255", "::1", "fe80::1",
		"fc00::1", "fd12:3456::1", "0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.250",
		"255.255.255.255", "::", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
		"64:ff9b::7f00:1", "2002:7f00:1::1", "fe80::1%eth0",
	}
	allowed := []string{
		"8.8.8.8", "1.1.1.1", "2606:4700::1111", "172.32.0.1", "100.128.0.1",
		"93.184.216.34", "::ffff:8.8.8.8", "64:ff9b::808:808", "2a00:1450:4001::200e",
	}
	for _, s := range blocked {
		if !IsBlockedIP(netip.MustParseAddr(s)) {
			t.Errorf("%s should be blocked", s)
		}
	}
	for _, s := range allowed {
		if IsBlockedIP(netip.MustParseAddr(s)) {
			t.Errorf("%s should be allowed", s)
		}
	}
	if !IsBlockedIP(netip.Addr{}) {
		t.Error("the zero Addr should be blocked")
	}
}

func TestCheckURL(t *testing.T) {
	cases := []struct {
		url, want string // want "" means allowed
	}{
		{"https://example.com/a", ""},
		{"http://8.8.8.8/", ""},
		{"ftp://example.com/file", "only http and https"},
		{"file:///etc/passwd", "only http and https"},
		{"http://user:pass@example.com/", "user name or password"},
		{"http://user@example.com/", "user name or password"},
		{"http:///path", "no host"},
		{"example.com", "must start with http"},
		{"http://127.0.0.1:8080/", "private or local address (127.0.0.1)"},
		{"http://[::1]/", "private or local address (::1)"},
		{"http://[::ffff:169.254.169.254]/", "private or local address (169.254.169.254)"},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		err = checkURL(u, false)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.url, err, c.want)
		}
		if strings.Contains(c.url, "pass@") && err != nil && strings.Contains(err.Error(), "pass@") {
			t.Errorf("the password leaks into the error: %v", err)
		}
	}
	u, _ := url.Parse("http://127.0.0.1/")
	if err := checkURL(u, true); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	}
}

// The dialer refuses blocked addresses however they were reached: here
// a host name resolving to loopback.
func TestSafeTransportRefusesResolvedLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("secret"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	client := &http.Client{Transport: safeTransport(false)}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://localhost:"+port+"/", nil)
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("connecting to localhost should fail")
	}
	if !strings.Contains(err.Error(), "private or local address") {
		t.Fatalf("error %v should name the refused address", err)
	}

	client = &http.Client{Transport: safeTransport(true)}
	resp, err = client.Get("http://localhost:" + port + "/")
	if err != nil {
		t.Fatalf("AllowPrivate transport: %v", err)
	}
	resp.Body.Close()
}

func TestSafeTransportIgnoresProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	if tr := safeTransport(false); tr.Proxy != nil {
		t.Fatal("the safe transport must not use a proxy")
	}
}
