package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/api"
)

// routes is one request of every route (and one that is no route).
var routes = [][2]string{
	{"POST", "/api/threads"},
	{"GET", "/api/threads/th_x"},
	{"DELETE", "/api/threads/th_x"},
	{"POST", "/api/threads/th_x/runs"},
	{"GET", "/api/threads/th_x/runs/run_x"},
	{"POST", "/api/threads/th_x/runs/run_x/cancel"},
	{"GET", "/api/threads/th_x/runs/run_x/stream"},
	{"GET", "/api/threads/th_x/files/a.txt"},
	{"GET", "/api/nothing/here"},
}

func TestAPIWithoutTokenIsDisabled(t *testing.T) {
	h := newHarness(t, config{api: func(o *api.Options) { o.Token = "" }})
	if h.api.Enabled() {
		t.Error("Enabled with no token")
	}
	for _, rt := range routes {
		for _, auth := range []string{"Bearer " + token, "Bearer ", ""} {
			r := h.request(rt[0], rt[1], `{"input":"hi"}`, "Authorization", auth)
			wantError(t, r, http.StatusServiceUnavailable, "api_disabled")
		}
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("the disabled API made %d model calls", n)
	}
}

func TestAPIBearerToken(t *testing.T) {
	h := newHarness(t, config{})
	if !h.api.Enabled() {
		t.Error("not Enabled with a token")
	}
	bad := []string{
		"", // none
		"Bearer",
		"Bearer ",
		"Bearer wrong",
		"Bearer " + token + "x",
		"Bearer " + token[:len(token)-1],
		"Basic " + token,
		token,
		"Bearer" + token,
	}
	for _, rt := range routes {
		for _, auth := range bad {
			r := h.request(rt[0], rt[1], `{"input":"hi"}`, "Authorization", auth)
			wantError(t, r, http.StatusUnauthorized, "unauthorized")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with %q: WWW-Authenticate = %q", rt[0], rt[1], auth, r.header.Get("WWW-Authenticate"))
			}
			if strings.Contains(string(r.body), token) {
				t.Errorf("the 401 body shows the token: %s", r.body)
			}
		}
	}
	// The right token works, whatever the scheme's case.
	for _, auth := range []string{"Bearer " + token, "bearer " + token, "BEARER " + token} {
		r := h.request("POST", "/api/threads", nil, "Authorization", auth)
		if r.status != http.StatusOK {
			t.Errorf("create thread with %q: %s", auth, r)
		}
	}
	// A route that does not exist says so, as JSON, once authorized.
	wantError(t, h.request("GET", "/api/nothing/here", nil), http.StatusNotFound, "not_found")
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("unauthorized requests made %d model calls", n)
	}
}

// TestTrustLoopback: with TrustLoopback, a request from this machine
// needs no token; without it, it does.
func TestTrustLoopback(t *testing.T) {
	for _, trust := range []bool{false, true} {
		h := newHarness(t, config{api: func(o *api.Options) { o.TrustLoopback = trust }})
		req := httptest.NewRequest("GET", "/api/assistants/lead_agent", nil)
		req.RemoteAddr = "127.0.0.1:5555"
		rec := httptest.NewRecorder()
		h.api.ServeHTTP(rec, req)
		if got, want := rec.Code == http.StatusOK, trust; got != want {
			t.Errorf("trust_loopback %v: status %d", trust, rec.Code)
		}
		req.RemoteAddr = "192.0.2.7:5555" // TEST-NET-1: never dialled, only a RemoteAddr string
		rec = httptest.NewRecorder()
		h.api.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("trust_loopback %v, from elsewhere: status %d", trust, rec.Code)
		}
	}
}
