package main

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// scheduleModel scripts the fake model: a message "schedule: ARGS" makes
// it call schedule_task with ARGS (made by args at that moment), the tool's
// result is repeated as the answer, and a scheduled prompt "say tick" is
// answered "tick N", N counting those runs.
func scheduleModel(model *fakeopenai.Server, args func(text string) string) *atomic.Int32 {
	var ticks atomic.Int32
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "tool":
			return fakeopenai.Turn{Text: "Tool result: " + last.Content}
		case strings.Contains(last.Content, "schedule:"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "schedule_task", Arguments: args(last.Content)}}}
		case strings.Contains(last.Content, "say tick"):
			return fakeopenai.Turn{Text: fmt.Sprintf("tick %d", ticks.Add(1))}
		}
		return fakeopenai.Turn{Text: "ok"}
	})
	return &ticks
}

// matching returns the items whose text passes keep.
func matching[T any](items []T, text func(T) string, keep func(string) bool) []T {
	var out []T
	for _, it := range items {
		if keep(text(it)) {
			out = append(out, it)
		}
	}
	return out
}

// isTick reports whether text is a scheduled answer of the task mark.
func isTick(mark string) func(string) bool {
	return func(text string) bool { return strings.HasPrefix(text, "⏰ "+mark) && strings.Contains(text, "tick") }
}

func plainText(m *faketelegram.SentMessage) string { return m.PlainText }

// scheduled returns the chat's messages that are scheduled answers.
func scheduled(tg *faketelegram.Server, chat int64, mark string) []*faketelegram.SentMessage {
	return matching(tg.Messages(chat), plainText, isTick(mark))
}

// TestScheduledTaskInATelegramTopic: a message in a forum topic makes the
// model schedule a task; its runs arrive in that topic as new messages
// marked ⏰ with the description; /schedules lists it (the line starts
// with its id), /status counts it, /unschedule removes it; /help and the
// command menu offer both commands.
func TestScheduledTaskInATelegramTopic(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	scheduleModel(model, func(string) string {
		return `{"prompt":"say tick","every":"2s","description":"Ticker"}`
	})
	run := startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) { c.Scheduler.MinIntervalSeconds = 1 })
	forum := faketelegram.Chat{ID: -100700, Type: "supergroup", Title: "Forum", IsForum: true}
	tg.AddChat(forum)
	tg.AddTopic(forum.ID, 7)
	say := func(text string) {
		tg.PushMessage(faketelegram.InTopic(faketelegram.Group(forum, ann, text), 7))
	}

	say("@deerflow_test_bot schedule: say tick every 2 seconds")
	created := waitMessage(t, tg, forum.ID, `"next_run"`)
	if !strings.Contains(created.PlainText, `"id":"sch_`) {
		t.Fatalf("schedule_task's result: %q", created.PlainText)
	}
	tg.WaitFor(func() bool { return len(scheduled(tg, forum.ID, "Ticker")) > 0 })
	tick := scheduled(tg, forum.ID, "Ticker")[0]
	if tick.ThreadID != 7 {
		t.Errorf("the scheduled answer went to thread %d, want topic 7", tick.ThreadID)
	}
	if tick.ReplyTo != 0 {
		t.Errorf("the scheduled answer replies to message %d; it must be a message of its own", tick.ReplyTo)
	}
	if !strings.HasPrefix(tick.PlainText, "⏰ Ticker\n") {
		t.Errorf("scheduled answer %q", tick.PlainText)
	}

	say("/schedules")
	list := waitMessage(t, tg, forum.ID, "every 2s")
	id, _, _ := strings.Cut(list.PlainText, " ")
	if !strings.HasPrefix(id, "sch_") || !strings.Contains(list.PlainText, "Ticker") {
		t.Fatalf("/schedules: %q", list.PlainText)
	}
	say("/status")
	waitMessage(t, tg, forum.ID, "Scheduled tasks: 1 (next ")
	say("/unschedule " + id)
	waitMessage(t, tg, forum.ID, "Cancelled the scheduled task "+id+" (Ticker)")
	if tasks := run.app.scheduler.Tasks(fmt.Sprintf("telegram:%d:t7", forum.ID)); len(tasks) != 0 {
		t.Errorf("tasks left after /unschedule: %+v", tasks)
	}
	say("/unschedule " + id)
	waitMessage(t, tg, forum.ID, "There is no scheduled task")

	say("/help")
	help := waitMessage(t, tg, forum.ID, "show this list")
	if !strings.Contains(help.PlainText, "/schedules") || !strings.Contains(help.PlainText, "/unschedule") {
		t.Errorf("/help lacks /schedules: %q", help.PlainText)
	}
	var menu []string
	for _, c := range tg.Commands() {
		menu = append(menu, c.Command)
	}
	if !slices.Contains(menu, "schedules") || !slices.Contains(menu, "unschedule") {
		t.Errorf("Telegram's command menu: %v", menu)
	}
}

// TestScheduledTasksSurviveKill9: deerflow is killed (SIGKILL) between two
// occurrences of a recurring task and before a one-shot's time, and stays
// down past both. Back up, each runs once, saying it is late: the
// occurrence that ran before the kill is not run again, the ones missed
// are run once for all, the one-shot is not lost.
func TestScheduledTasksSurviveKill9(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	var atUnix atomic.Int64
	ticks := scheduleModel(model, func(text string) string {
		if strings.Contains(text, "once") {
			at := time.Now().Add(3 * time.Second).Truncate(time.Second)
			atUnix.Store(at.Unix())
			return fmt.Sprintf(`{"prompt":"say tick","at":%q,"description":"Once"}`, at.Format(time.RFC3339))
		}
		return `{"prompt":"say tick","every":"3s","description":"Ticker"}`
	})
	dir := t.TempDir()
	cfg := telegramConfig(t, dir, model.URL, tg.Token, tg.URL)
	appendConfig(t, cfg, "scheduler:\n  min_interval_seconds: 1\n")
	cmd := startBinaryServe(t, dir, cfg)

	tg.PushMessage(faketelegram.Private(ann, "schedule: say tick every 3 seconds"))
	waitMessage(t, tg, ann.ID, `"next_run"`)
	tg.WaitFor(func() bool { return len(scheduled(tg, ann.ID, "Ticker")) == 1 })
	tg.PushMessage(faketelegram.Private(ann, "schedule: say tick once"))
	tg.WaitFor(func() bool { return countText(tg, ann.ID, `"next_run"`) == 2 })
	if len(scheduled(tg, ann.ID, "Once")) != 0 {
		t.Fatal("the one-shot ran before its time")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	before := int(ticks.Load())

	// Down past the one-shot's time and two of the recurring task's
	// occurrences, and long enough for their runs to count as late.
	at := time.Unix(atUnix.Load(), 0)
	for time.Until(at.Add(lateAfterForTest)) > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	startBinaryServe(t, dir, cfg)
	late := func(mark string) int { return lateRuns(tg, ann.ID, mark) }
	tg.WaitFor(func() bool { return late("Once") == 1 && late("Ticker") == 1 })
	tg.PushMessage(faketelegram.Private(ann, "/schedules"))
	list := waitMessage(t, tg, ann.ID, "every 3s")
	id, _, _ := strings.Cut(list.PlainText, " ")
	if strings.Contains(list.PlainText, "Once") {
		t.Errorf("the one-shot is still listed after its run: %q", list.PlainText)
	}
	tg.PushMessage(faketelegram.Private(ann, "/unschedule "+id))
	waitMessage(t, tg, ann.ID, "Cancelled the scheduled task "+id)

	if n := len(scheduled(tg, ann.ID, "Once")); n != 1 {
		t.Errorf("the one-shot ran %d times", n)
	}
	if n := late("Ticker"); n != 1 {
		t.Errorf("the missed occurrences ran %d times late; want once for all", n)
	}
	if before != 1 {
		t.Errorf("%d scheduled runs before the kill, want 1", before)
	}
}

// countText counts the chat's messages that show text.
func countText(tg *faketelegram.Server, chat int64, text string) int {
	return len(matching(tg.Messages(chat), plainText, func(s string) bool { return strings.Contains(s, text) }))
}

// lateRuns counts the chat's scheduled answers of mark that say they are
// late.
func lateRuns(tg *faketelegram.Server, chat int64, mark string) int {
	return len(matching(scheduled(tg, chat, mark), plainText, func(s string) bool { return strings.Contains(s, "(late: it was due at") }))
}

// lateAfterForTest is how long after its time a run must start to be
// called late (scheduler.lateAfter), with a margin.
const lateAfterForTest = 2 * time.Second

// slackScheduled returns the channel's scheduled answers (final text).
func slackScheduled(sl *fakeslack.Server, channel string) []*fakeslack.Posted {
	return matching(sl.Messages(channel), markdownOf, isTick("Ticker"))
}

// TestScheduledTaskInASlackThread: a task scheduled from a mention runs
// in that mention's thread, as a new message of the bot; the channel's
// /deerflow schedules (which Slack sends from the channel, not the thread)
// lists it, and /deerflow unschedule cancels it.
func TestScheduledTaskInASlackThread(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	scheduleModel(model, func(string) string {
		return `{"prompt":"say tick","every":"2s","description":"Ticker"}`
	})
	run := startSlack(t, sl, model, t.TempDir(), func(c *config.Config) { c.Scheduler.MinIntervalSeconds = 1 })
	sl.AddChannel("C1", "channel")
	ts := sl.Mention("C1", "U1", "<@U0BOT> schedule: say tick every 2 seconds", "")
	waitPosted(t, sl, "C1", `"next_run"`, true)
	sl.WaitFor(func() bool { return len(slackScheduled(sl, "C1")) > 0 })
	if p := slackScheduled(sl, "C1")[0]; p.ThreadTS != ts || p.Ephemeral {
		t.Errorf("the scheduled answer went to thread %q (ephemeral %v), want the mention's thread %q", p.ThreadTS, p.Ephemeral, ts)
	}

	sl.SlashCommand("C1", "U1", "/deerflow", "schedules")
	var id string
	sl.WaitFor(func() bool {
		for _, p := range sl.Messages("C1") {
			if p.Ephemeral && strings.HasPrefix(p.Text, "sch_") && strings.Contains(p.Text, "Ticker") {
				id, _, _ = strings.Cut(p.Text, " ")
				return true
			}
		}
		return false
	})
	if id == "" {
		t.Fatal("/deerflow schedules did not list the thread's task")
	}
	sl.SlashCommand("C1", "U1", "/deerflow", "unschedule "+id)
	waitPosted(t, sl, "C1", "Cancelled the scheduled task "+id, false)
	if tasks := run.app.scheduler.Tasks("slack:C1:" + ts); len(tasks) != 0 {
		t.Errorf("tasks left: %+v", tasks)
	}
}

// TestScheduledTaskInLark: a task scheduled in a Lark chat answers there
// as a new card (not a reply), marked ⏰; /schedules and /unschedule work.
func TestScheduledTaskInLark(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	scheduleModel(model, func(string) string {
		return `{"prompt":"say tick","every":"2s","description":"Ticker"}`
	})
	startLark(t, lk, model, t.TempDir(), func(c *config.Config) { c.Scheduler.MinIntervalSeconds = 1 })
	say := func(text string) {
		lk.Send(fakelark.MessageEvent{ChatID: "oc_p2p", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text(text)})
	}
	say("schedule: say tick every 2 seconds")
	waitCard(t, lk, "oc_p2p", `"next_run"`)
	tick := waitCard(t, lk, "oc_p2p", "⏰ Ticker")
	lk.WaitFor(func() bool {
		for _, m := range lk.Messages("oc_p2p") {
			if m.MessageID == tick.MessageID && strings.Contains(cardText(m.Content), "tick 1") {
				tick = m
				return true
			}
		}
		return false
	})
	if tick.ReplyTo != "" {
		t.Errorf("the scheduled answer replies to %q; it must be a message of its own", tick.ReplyTo)
	}
	say("/schedules")
	list := waitCard(t, lk, "oc_p2p", "every 2s")
	id, _, _ := strings.Cut(cardText(list.Content), " ")
	if !strings.HasPrefix(id, "sch_") {
		t.Fatalf("/schedules: %q", cardText(list.Content))
	}
	say("/unschedule " + id)
	waitCard(t, lk, "oc_p2p", "Cancelled the scheduled task "+id)
}

// TestScheduledTaskFailuresAndAllowList: with allowed_users written as a
// user name, the creator's task runs; each failed run says so in the chat
// and the third in a row pauses the task, saying so; /schedules shows it
// paused. After a restart with the creator no longer allowed, their task
// is paused without running.
func TestScheduledTaskFailuresAndAllowList(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	var fail atomic.Bool
	fail.Store(true)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "tool":
			return fakeopenai.Turn{Text: "Tool result: " + last.Content}
		case strings.Contains(last.Content, "schedule:"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "schedule_task",
				Arguments: `{"prompt":"say tick","every":"1s","description":"Flaky"}`}}}
		case strings.Contains(last.Content, "say tick") && fail.Load():
			return fakeopenai.Turn{Status: 400}
		}
		return fakeopenai.Turn{Text: "tick"}
	})
	dir := t.TempDir()
	allow := func(users ...string) func(*config.Config) {
		return func(c *config.Config) {
			c.Scheduler.MinIntervalSeconds = 1
			c.Channels.Telegram.AllowedUsers = users
		}
	}
	run := startTelegram(t, tg, model, dir, allow("@ann"))
	tg.PushMessage(faketelegram.Private(ann, "schedule: say tick every second"))
	waitMessage(t, tg, ann.ID, `"next_run"`)
	waitMessage(t, tg, ann.ID, "I paused the scheduled task")
	if failed := countText(tg, ann.ID, "⏰ Flaky"); failed != 3 {
		t.Errorf("%d failed runs shown in the chat before the pause, want 3:%s", failed, dump(tg.Messages(ann.ID)))
	}
	tg.PushMessage(faketelegram.Private(ann, "/schedules"))
	list := waitMessage(t, tg, ann.ID, "every 1s")
	if !strings.Contains(list.PlainText, "paused after 3 failed runs") || strings.Contains(list.PlainText, "last: ⏰") {
		t.Errorf("/schedules: %q", list.PlainText)
	}

	// A second task, healthy, then ann leaves the allow-list.
	fail.Store(false)
	tg.PushMessage(faketelegram.Private(ann, "schedule: again"))
	eventually(t, func() bool { return len(run.app.scheduler.Tasks("telegram:1001")) == 2 })
	run.stop()
	run = startTelegram(t, tg, model, dir, allow("@bob"))
	eventually(t, func() bool {
		for _, task := range run.app.scheduler.Tasks("telegram:1001") {
			if !task.Paused {
				return false
			}
		}
		return true
	})
	for _, task := range run.app.scheduler.Tasks("telegram:1001") {
		if task.LastStatus != "paused: its creator may no longer use this bot" && !strings.Contains(task.LastStatus, "failed runs") {
			t.Errorf("task %s: %q", task.ID, task.LastStatus)
		}
	}
}

// eventually polls cond (state of this process, which no fake server
// call signals) until it holds, for at most 20 s.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestScheduledRunCutByKill9IsTold: deerflow is killed while a scheduled
// run is working. Back up, the chat is told that run was cut short (not
// to /retry, which would run the person's last message), and the task
// keeps running at its times.
func TestScheduledRunCutByKill9IsTold(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	hold := make(chan struct{})
	defer close(hold)
	var held atomic.Bool
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "tool":
			return fakeopenai.Turn{Text: "Tool result: " + last.Content}
		case strings.Contains(last.Content, "schedule:"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "schedule_task",
				Arguments: `{"prompt":"say tick","every":"2s","description":"Ticker"}`}}}
		case held.CompareAndSwap(false, true):
			// Part of the answer, then nothing: the part shows only once
			// the run's start is stored (the model is asked before).
			return fakeopenai.Turn{Text: "never finished", Chunk: 6, HoldAfter: 2, Hold: hold}
		}
		return fakeopenai.Turn{Text: "tick"}
	})
	dir := t.TempDir()
	cfg := telegramConfig(t, dir, model.URL, tg.Token, tg.URL)
	appendConfig(t, cfg, "scheduler:\n  min_interval_seconds: 1\n")
	cmd := startBinaryServe(t, dir, cfg)
	tg.PushMessage(faketelegram.Private(ann, "schedule: say tick every 2 seconds"))
	waitMessage(t, tg, ann.ID, `"next_run"`)
	model.WaitRequests(3) // the tool call, its answer, and the held run
	// Killed once the held run is known to have started: its first words
	// are on screen. (Killed before that, it would simply run again.)
	waitMessage(t, tg, ann.ID, "never")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	startBinaryServe(t, dir, cfg)
	defer func() {
		if t.Failed() {
			for _, r := range model.Requests() {
				t.Logf("model: %s %q", r.Last().Role, r.Last().Content)
			}
			for _, c := range tg.CallsOf("sendMessage") {
				t.Logf("send: %d %v", c.Status, c.Params)
			}
		}
	}()
	told := waitMessage(t, tg, ann.ID, "I was restarted before I could finish a scheduled task's run")
	if strings.Contains(told.PlainText, "/retry") {
		t.Errorf("the notice points to /retry: %q", told.PlainText)
	}
	tg.WaitFor(func() bool { return len(scheduled(tg, ann.ID, "Ticker")) > 0 })
}

// TestScheduledQuestionWaitsForTheReply: a scheduled run that asks the
// person a question (ask_clarification) gets their next message in the
// chat as the answer, with the run's context.
func TestScheduledQuestionWaitsForTheReply(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "tool":
			return fakeopenai.Turn{Text: "Tool result: " + last.Content}
		case strings.Contains(last.Content, "schedule:"):
			at := time.Now().Add(2 * time.Second).Format(time.RFC3339)
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "schedule_task",
				Arguments: `{"prompt":"ask me my color","at":"` + at + `","description":"Color"}`}}}
		case strings.Contains(last.Content, "ask me my color"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "ask_clarification",
				Arguments: `{"question":"Which color do you like?","clarification_type":"missing_info"}`}}}
		case last.Content == "blue":
			return fakeopenai.Turn{Text: "noted; I was asked: " + r.Messages[1].Content}
		}
		return fakeopenai.Turn{Text: "ok"}
	})
	startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) { c.Scheduler.MinIntervalSeconds = 1 })
	tg.PushMessage(faketelegram.Private(ann, "schedule: ask me my color soon"))
	waitMessage(t, tg, ann.ID, `"next_run"`)
	q := waitMessage(t, tg, ann.ID, "Which color do you like?")
	if !strings.HasPrefix(q.PlainText, "⏰ Color") {
		t.Errorf("the scheduled question %q", q.PlainText)
	}
	tg.PushMessage(faketelegram.Private(ann, "blue"))
	waitMessage(t, tg, ann.ID, "noted; I was asked: ask me my color")
}
