package router

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent/tokens"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/outbox"
	"github.com/deerflow/deerflow/progress"
	"github.com/deerflow/deerflow/store"
)

// subagentSum is what the finished subagents of a conversation's latest
// run (threadID, runID) used, for /status. It lives in memory only: the
// task records (store.Task) do not keep tokens.
type subagentSum struct {
	threadID, runID string
	done            int
	in, out         int64
	cost            float64
}

// trackTask keeps the conversation's list of unfinished tasks of run
// runID (on threadID) for /status, and sums up the finished ones' usage.
func (r *Router) trackTask(c *conv, threadID, runID string, te event.Task, done bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := &c.subs; s.threadID != threadID || s.runID != runID {
		*s = subagentSum{threadID: threadID, runID: runID} // a new run's
	}
	if done {
		c.subs.done++
		c.subs.in += int64(te.Usage.PromptTokens)
		c.subs.out += int64(te.Usage.CompletionTokens)
		c.subs.cost += te.Usage.Cost
	}
	for i, t := range c.tasks {
		if t.ID == te.ID {
			if done {
				c.tasks = append(c.tasks[:i], c.tasks[i+1:]...)
			} else {
				c.tasks[i] = te
			}
			return
		}
	}
	if !done {
		c.tasks = append(c.tasks, te)
	}
}

// tasksStatus is the /status lines about a conversation's subagents: those
// running, and how many of the latest run's have finished, with their
// tokens and cost. Callers hold r.mu.
func (r *Router) tasksStatus(c *conv) string {
	s := c.subs
	if s.threadID != c.threadID {
		s = subagentSum{} // a run of the thread before /new
	}
	if len(c.tasks) == 0 && s.done == 0 {
		return ""
	}
	var parts []string
	if len(c.tasks) > 0 {
		parts = append(parts, fmt.Sprintf("%d running", len(c.tasks)))
	}
	if s.done > 0 {
		parts = append(parts, fmt.Sprintf("%d done", s.done))
	}
	if s.in+s.out > 0 {
		parts = append(parts, tokens.CountText(s.in+s.out)+" tokens")
	}
	if s.cost > 0 {
		parts = append(parts, tokens.CostText(s.cost))
	}
	var sb strings.Builder
	sb.WriteString("Subagents: " + strings.Join(parts, ", ") + "\n")
	for _, t := range c.tasks {
		if t.Status == event.TaskPending {
			fmt.Fprintf(&sb, "• %s (%s) — waiting for a free slot\n", t.Description, t.Type)
			continue
		}
		fmt.Fprintf(&sb, "• %s (%s) — running for %s\n", t.Description, t.Type, r.opts.Now().Sub(t.Started).Round(time.Second))
	}
	return sb.String()
}

// RecordInterrupted records, inside tx, what the conversations of runs a
// previous process left running must be told: each run gets one sentence
// (naming its stopped subagent tasks) pointing to /retry, and each task's
// progress reply is finished as interrupted. The outbox delivers them once
// the channels are up, so a crash before then loses nothing.
func (r *Router) RecordInterrupted(tx *store.Tx, runs []*store.Run, tasks []*store.Task) error {
	return r.recordInterrupted(tx, runs, tasks, interruptedText)
}

// recordInterrupted is RecordInterrupted with the run's sentence made by
// text from its stopped tasks' descriptions.
func (r *Router) recordInterrupted(tx *store.Tx, runs []*store.Run, tasks []*store.Task, text func([]string) string) error {
	now := r.opts.Now()
	put := func(chatKey string, o *bus.Outbound) error {
		return outbox.PutTx(tx, outbox.NewRecord(chatKey, "", o, now))
	}
	byRun := map[string][]string{}
	for _, t := range tasks {
		byRun[t.RunID] = append(byRun[t.RunID], t.Description)
		if t.Progress == "" {
			continue
		}
		channel, chat, topic := bus.SplitChatKey(t.ChatKey)
		if err := put(t.ChatKey, &bus.Outbound{Kind: bus.OutEdit, Channel: channel, ChatID: chat, Topic: topic, ReplyTo: t.ReplyTo,
			EditID: t.Progress, Task: t.ID, Final: true, Failed: true,
			Text: progress.InterruptedTask(t.Description)}); err != nil {
			return err
		}
	}
	for _, r := range runs {
		if r.ChatKey == "" {
			continue
		}
		channel, chat, topic := bus.SplitChatKey(r.ChatKey)
		if err := put(r.ChatKey, &bus.Outbound{Kind: bus.OutMessage, Channel: channel, ChatID: chat, Topic: topic,
			ReplyTo: r.MessageID, Text: text(byRun[r.ID]), Final: true, Failed: true}); err != nil {
			return err
		}
	}
	return nil
}

// interruptedText is the one sentence a conversation gets about a reply a
// restart cut short.
func interruptedText(tasks []string) string {
	var stopped string
	switch len(tasks) {
	case 0:
	case 1:
		stopped = fmt.Sprintf(" (the subagent task %q stopped too)", tasks[0])
	default:
		q := make([]string, len(tasks))
		for i, t := range tasks {
			q[i] = strconv.Quote(t)
		}
		stopped = fmt.Sprintf(" (%d subagent tasks stopped too: %s)", len(tasks), strings.Join(q, ", "))
	}
	return "⚠️ I was restarted before I could finish this reply" + stopped + "; send /retry to run your message again."
}
