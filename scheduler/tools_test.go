package scheduler

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/deerflow/deerflow/tools"
)

func callTool(t *testing.T, s *Scheduler, env *tools.Env, name, args string) (string, error) {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Spec().Name == name {
			return tl.Run(tools.WithEnv(context.Background(), env), json.RawMessage(args))
		}
	}
	t.Fatalf("no tool %s", name)
	return "", nil
}

// TestToolsScheduleListCancel drives the three tools as the model does:
// the answers' JSON shapes, errors that say what is wrong, the per-person
// cap, and that a conversation sees only its own tasks.
func TestToolsScheduleListCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(o *Options) { o.MaxPerUser = 2 })
		env := &tools.Env{ChatKey: chat, UserID: "telegram:7"}
		out, err := callTool(t, h.s, env, "schedule_task", `{"prompt":"summarize HN","cron":"0 9 * * 1-5","timezone":"Europe/Berlin","description":"HN digest"}`)
		if err != nil {
			t.Fatal(err)
		}
		var created struct {
			ID      string `json:"id"`
			NextRun string `json:"next_run"`
		}
		if err := json.Unmarshal([]byte(out), &created); err != nil || !strings.HasPrefix(created.ID, "sch_") {
			t.Fatalf("schedule_task returned %q", out)
		}
		if next, err := time.Parse(time.RFC3339, created.NextRun); err != nil || next.In(mustZone(t, "Europe/Berlin")).Hour() != 9 {
			t.Errorf("next_run %q", created.NextRun)
		}
		badArgs(t, h.s, env)
		callTool(t, h.s, env, "schedule_task", `{"prompt":"y","every":"1h"}`)
		if _, err := callTool(t, h.s, env, "schedule_task", `{"prompt":"z","every":"1h"}`); err == nil || !strings.Contains(err.Error(), "already have 2 scheduled tasks") {
			t.Errorf("a third task past max_per_user 2: %v", err)
		}

		out, err = callTool(t, h.s, env, "list_scheduled_tasks", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		var list []map[string]string
		if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 {
			t.Fatalf("list_scheduled_tasks returned %q", out)
		}
		for _, key := range []string{"id", "prompt", "description", "schedule", "next_run", "last_run", "last_status"} {
			if _, ok := list[0][key]; !ok {
				t.Errorf("a listed task lacks %q: %v", key, list[0])
			}
		}
		other := &tools.Env{ChatKey: "telegram:43", UserID: "telegram:8"}
		if out, _ := callTool(t, h.s, other, "list_scheduled_tasks", `{}`); out != "[]" {
			t.Errorf("another conversation sees %s", out)
		}
		if _, err := callTool(t, h.s, other, "cancel_scheduled_task", `{"id":"`+created.ID+`"}`); err == nil {
			t.Error("another conversation cancelled the task")
		}
		if _, err := callTool(t, h.s, env, "cancel_scheduled_task", `{"id":"`+created.ID+`"}`); err != nil {
			t.Fatal(err)
		}
		if n := len(h.s.Tasks(chat)); n != 1 {
			t.Errorf("%d tasks after cancelling one of 2", n)
		}
		h.s.Close()
		h.st.Close()
	})
}

// badArgs checks that schedule_task refuses bad schedules saying why.
func badArgs(t *testing.T, s *Scheduler, env *tools.Env) {
	for args, want := range map[string]string{
		`{"prompt":"x"}`:                  "exactly one of at",
		`{"prompt":"x","every":"5s"}`:     "too often",
		`{"prompt":"x","cron":"0 9 * *"}`: "five fields",
		`{"every":"1h"}`:                  "missing required argument(s): prompt",
	} {
		if _, err := callTool(t, s, env, "schedule_task", args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
