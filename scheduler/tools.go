package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/deerflow/deerflow/tools"
)

// scheduleArgs are schedule_task's arguments.
type scheduleArgs struct {
	Prompt      string `json:"prompt" desc:"What to do at each run, written as the person's request (it is the run's input, with no memory of this conversation): e.g. 'Summarize the top 5 Hacker News stories with links.'"`
	At          string `json:"at,omitempty" desc:"Run once at this time: RFC 3339 with its offset, e.g. 2026-12-01T09:00:00+01:00."`
	Every       string `json:"every,omitempty" desc:"Run at this interval, a Go duration such as 30m, 2h or 24h."`
	Cron        string `json:"cron,omitempty" desc:"Run on this cron schedule: five fields (minute hour day-of-month month day-of-week), e.g. '0 9 * * 1-5' for weekdays at 9:00."`
	Timezone    string `json:"timezone,omitempty" desc:"The IANA time zone of cron, e.g. Europe/Berlin; default the server's scheduler.timezone."`
	Description string `json:"description,omitempty" desc:"A short title shown with each result, e.g. 'Morning HN digest'."`
	Continue    bool   `json:"continue,omitempty" desc:"true when each run should see the earlier runs' results, for requests that compare or follow up ('what changed since yesterday'); default false: each run starts a fresh conversation."`
}

type idArgs struct {
	ID string `json:"id" desc:"The task's id, as schedule_task or list_scheduled_tasks gave it."`
}

// TaskView is a task as the tools and the HTTP API show it.
type TaskView struct {
	ID          string `json:"id"`
	Prompt      string `json:"prompt"`
	Description string `json:"description"`
	Schedule    string `json:"schedule"`
	NextRun     string `json:"next_run"`
	LastRun     string `json:"last_run"`
	LastStatus  string `json:"last_status"`
}

// View is t as the tools and the HTTP API show it.
func View(t Task) TaskView {
	return TaskView{ID: t.ID, Prompt: t.Prompt, Description: t.Description, Schedule: t.Schedule.String(),
		NextRun: rfc3339(t.NextRun), LastRun: rfc3339(t.LastRun), LastStatus: t.LastStatus}
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

// The tools' names (part of the config contract).
const (
	ToolSchedule = "schedule_task"
	ToolList     = "list_scheduled_tasks"
	ToolCancel   = "cancel_scheduled_task"
)

// Tools returns schedule_task, list_scheduled_tasks and
// cancel_scheduled_task, acting on the conversation of the run that calls
// them (tools.Env).
func (s *Scheduler) Tools() []tools.Tool {
	return []tools.Tool{
		tools.Func(ToolSchedule,
			"Schedule a task that runs later by itself, in this chat, as a new message with its result: once (at), at an interval (every) or on a cron schedule (cron). Give exactly one of at, every or cron. Use it when the person asks for something to happen at a time or repeatedly ('every weekday at 9', 'in two hours', 'each Monday'). Returns the task's id and next run.",
			s.scheduleTool),
		tools.Func(ToolList,
			"List this conversation's scheduled tasks: id, prompt, description, schedule, next run, last run and its status.",
			func(ctx context.Context, _ struct{}) (string, error) {
				views := []TaskView{}
				for _, t := range s.Tasks(tools.EnvFrom(ctx).ChatKey) {
					views = append(views, View(t))
				}
				return marshal(views)
			}),
		tools.Func(ToolCancel,
			"Cancel one of this conversation's scheduled tasks by its id.",
			func(ctx context.Context, in idArgs) (string, error) {
				t, err := s.Cancel(tools.EnvFrom(ctx).ChatKey, in.ID)
				if errors.Is(err, ErrNotFound) {
					return "", errors.New("this conversation has no scheduled task with that id; list_scheduled_tasks lists them")
				}
				if err != nil {
					return "", err
				}
				return marshal(map[string]string{"cancelled": t.ID})
			}),
	}
}

func (s *Scheduler) scheduleTool(ctx context.Context, in scheduleArgs) (string, error) {
	env := tools.EnvFrom(ctx)
	var name string
	if s.opts.SenderName != nil {
		name = s.opts.SenderName(env.RunID)
	}
	t, err := s.Create(NewTask{
		ChatKey: env.ChatKey, User: env.UserID, UserName: name, Prompt: in.Prompt, Description: in.Description,
		Spec: Spec{At: in.At, Every: in.Every, Cron: in.Cron, Timezone: in.Timezone}, Continue: in.Continue,
	})
	if err != nil {
		return "", err
	}
	return marshal(map[string]string{"id": t.ID, "next_run": rfc3339(t.NextRun)})
}

func marshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// PromptSection tells the lead agent what the tools are for.
const PromptSection = `<scheduled_tasks>
When the person asks for something to happen later or repeatedly ("every morning…", "remind me at 5", "each Friday send me…"), use schedule_task: the prompt runs by itself at each time, and its result arrives in this chat as a new message. Write the prompt so it stands alone (each run starts a fresh conversation). Confirm the schedule and the task's id in your answer; list_scheduled_tasks and cancel_scheduled_task manage them, and the person can use /schedules and /unschedule ID.
</scheduled_tasks>`
