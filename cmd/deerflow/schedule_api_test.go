package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// TestAPISchedules: a thread's scheduled tasks through the HTTP API: one
// is created, listed, runs on the thread (its answer among the thread's
// messages), and is deleted; a bad schedule is refused saying why.
func TestAPISchedules(t *testing.T) {
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "answer to: " + r.Last().Content}
	})
	addr := freeAddr(t)
	cfg := testConfig(t, model, t.TempDir())
	cfg.HTTP = config.HTTP{Listen: addr, APIToken: apiToken}
	cfg.Shutdown.GraceSeconds = 0
	cfg.Scheduler.MinIntervalSeconds = 1
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, io.Discard, nil) }()
	defer func() { cancel(); <-served }()
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	c := apiClient{t: t, base: "http://" + addr}

	var th apiThread
	c.call("POST", "/api/threads", map[string]any{}, http.StatusOK, &th)
	path := "/api/threads/" + th.ThreadID + "/schedules"
	status, body := c.do("POST", path, map[string]any{"prompt": "say tick"})
	if status != http.StatusBadRequest || !strings.Contains(string(body), "exactly one of at") {
		t.Errorf("a task without a schedule: %d %s", status, body)
	}
	var created struct{ ID, NextRun string }
	c.call("POST", path, map[string]any{"prompt": "say tick", "every": "1s", "description": "Ticker"}, http.StatusCreated, &created)
	if !strings.HasPrefix(created.ID, "sch_") {
		t.Fatalf("created %+v", created)
	}
	var list []struct {
		ID, Prompt, Description, Schedule string
	}
	c.call("GET", path, nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].ID != created.ID || list[0].Schedule != "every 1s" || list[0].Description != "Ticker" {
		t.Errorf("listed %+v", list)
	}
	deadline := time.Now().Add(10 * time.Second)
	for ran := false; !ran; {
		if time.Now().After(deadline) {
			t.Fatalf("the task never ran on the thread: %+v", th)
		}
		c.call("GET", "/api/threads/"+th.ThreadID, nil, http.StatusOK, &th)
		for _, m := range th.Values.Messages {
			ran = ran || m.Type == "ai" && m.Content == "answer to: say tick"
		}
		time.Sleep(50 * time.Millisecond) // polling the API, not timing
	}
	c.call("DELETE", path+"/"+created.ID, nil, http.StatusNoContent, nil)
	c.call("GET", path, nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Errorf("after DELETE: %+v", list)
	}
	c.call("DELETE", path+"/"+created.ID, nil, http.StatusNotFound, nil)
}
