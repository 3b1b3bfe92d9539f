package api_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/api"
)

// A client that sends its headers and then trickles the body, a byte now
// and then, is answered 408 once the body deadline passes: it cannot hold
// the request open, however steadily it trickles.
func TestAPIBodyDeadline(t *testing.T) {
	h := newHarness(t, config{api: func(o *api.Options) { o.BodyTimeout = 300 * time.Millisecond }})
	id := h.createThread()
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Only a guard against a hang: the answer comes after BodyTimeout.
	conn.SetReadDeadline(time.Now().Add(waitLimit))
	fmt.Fprintf(conn, "POST /api/threads/%s/runs HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"input\":\"", id, token)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("no answer to a trickled body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"detail":"The request body did not arrive in time."`) {
		t.Errorf("trickled body: %d %s", resp.StatusCode, body)
	}
	// No run was started by the half request.
	if th := h.getThread(id); len(th.Values.Messages) != 0 {
		t.Errorf("messages after a timed-out request: %+v", th.Values.Messages)
	}
	// A body sent whole is unaffected.
	run := h.startRun(id, map[string]any{"input": msg("hello")})
	h.waitStatus(id, run.RunID, "success")
}

// Deleting a thread removes its files on disk (through RemoveFiles); when
// that fails the client is told, and the thread is gone all the same.
func TestAPIDeleteRemovesFiles(t *testing.T) {
	var mu sync.Mutex
	var removed []string
	fail := false
	h := newHarness(t, config{api: func(o *api.Options) {
		o.RemoveFiles = func(id string) error {
			mu.Lock()
			defer mu.Unlock()
			removed = append(removed, id)
			if fail {
				return errors.New("permission denied")
			}
			return nil
		}
	}})
	a, b := h.createThread(), h.createThread()
	if r := h.request("DELETE", "/api/threads/"+a, nil); r.status != http.StatusNoContent {
		t.Errorf("delete: %s", r)
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	wantError(t, h.request("DELETE", "/api/threads/"+b, nil), http.StatusInternalServerError, "files_not_removed")
	wantError(t, h.request("GET", "/api/threads/"+b, nil), http.StatusNotFound, "thread_not_found")
	// A busy thread is refused before anything is removed.
	c, _, hold := h.busyThread("hold on", "done")
	wantError(t, h.request("DELETE", "/api/threads/"+c, nil), http.StatusConflict, "thread_busy")
	close(hold)
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{a, b}, removed); diff != "" {
		t.Errorf("RemoveFiles calls (-want +got):\n%s", diff)
	}
}
