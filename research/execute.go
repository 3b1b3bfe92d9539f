package research

import (
	"errors"
	"fmt"
	"strings"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/subagents"
	"github.com/deerflow/deerflow/tools"
)

// maxFindingsIn bounds one step's findings given to a later step or to the
// reporter.
const maxFindingsIn = 12000

// stepEvent is a task event of step i.
type stepEvent struct {
	i  int
	ev event.Event
}

// stepResult is how step i ended.
type stepResult struct {
	i       int
	out     subagents.Outcome
	err     error
	sources []tools.Source
}

// execute runs the plan's unfinished steps (research steps at once, each
// processing step after the steps before it), then the report.
func (s *session) execute(rec *store.Research) {
	n := len(rec.Plan.Steps)
	rec.Phase, rec.RunID, rec.Error = store.ResearchRunning, s.in.RunID, ""
	if len(rec.Steps) != n {
		rec.Steps = make([]store.ResearchStep, n)
	}
	for i := range rec.Steps {
		if rec.Steps[i].Status != event.TaskCompleted {
			rec.Steps[i] = store.ResearchStep{Status: event.TaskPending}
		}
	}
	if err := s.save(rec); err != nil {
		s.fail(nil, "I couldn't save this conversation; please try again.", err)
		return
	}
	s.status(panel(rec, ""), fmt.Sprintf("researching: %d steps", n))
	s.runSteps(rec)
	if s.ctx.Err() != nil {
		s.stopped(rec)
		return
	}
	done := 0
	for _, st := range rec.Steps {
		if st.Status == event.TaskCompleted {
			done++
		}
	}
	if done == 0 {
		s.fail(rec, runFailedText(n), errors.New("no research step finished"))
		return
	}
	s.report(rec)
}

// runSteps runs the steps not yet completed, each in its own goroutine,
// and records their events and results as they come, until all have
// ended.
func (s *session) runSteps(rec *store.Research) {
	n := len(rec.Plan.Steps)
	events := make(chan stepEvent, 64)
	results := make(chan stepResult)
	ended := make([]chan struct{}, n) // closed when step i has ended
	findings := make([]string, n)     // written before ended[i] closes
	running := 0
	for i := range n {
		ended[i] = make(chan struct{})
		if rec.Steps[i].Status == event.TaskCompleted {
			findings[i] = rec.Steps[i].Findings
			close(ended[i])
		}
	}
	for i := range n {
		if rec.Steps[i].Status == event.TaskCompleted {
			continue
		}
		running++
		go s.step(rec, i, ended, findings, events, results)
	}
	for running > 0 {
		select {
		case se := <-events:
			s.stepEvent(rec, se)
		case res := <-results:
			// A step sends its events before its result: show them first,
			// so that none is lost and a late task_started does not mark
			// the ended step running again.
			for drained := false; !drained; {
				select {
				case se := <-events:
					s.stepEvent(rec, se)
				default:
					drained = true
				}
			}
			running--
			s.stepEnded(rec, res, findings, ended[res.i])
		}
	}
}

// stepEnded records a step's result, keeping its findings for the steps
// after it when it completed, closes ended (the steps waiting for it may
// go on), and saves and shows the research.
func (s *session) stepEnded(rec *store.Research, res stepResult, findings []string, ended chan struct{}) {
	st := &rec.Steps[res.i]
	st.Ended = s.r.opts.Now()
	st.TaskID = res.out.ID
	if res.err != nil {
		st.Status, st.Findings = event.TaskFailed, res.err.Error()
	} else {
		st.Status, st.Findings = res.out.Status, res.out.Text
	}
	for _, src := range res.sources {
		st.Sources = append(st.Sources, store.ResearchSource{URL: src.URL, Title: src.Title})
	}
	if st.Status == event.TaskCompleted {
		findings[res.i] = st.Findings
	}
	close(ended)
	if err := s.save(rec); err != nil {
		s.r.log.ErrorContext(s.ctx, "recording a research step", "thread", s.in.ThreadID, "step", res.i+1, "err", err)
	}
	s.status(panel(rec, ""), fmt.Sprintf("step %d %s", res.i+1, st.Status))
}

// stepEvent shows a task event of a step and notes a start in rec.
func (s *session) stepEvent(rec *store.Research, se stepEvent) {
	if ts, ok := se.ev.(event.TaskStarted); ok {
		if te := ts.Task; te.Status == event.TaskRunning {
			st := &rec.Steps[se.i]
			st.Status, st.TaskID, st.Started = event.TaskRunning, te.ID, te.Started
			if err := s.save(rec); err != nil { // /status reads it
				s.r.log.ErrorContext(s.ctx, "recording a research step", "thread", s.in.ThreadID, "step", se.i+1, "err", err)
			}
			s.status(panel(rec, ""), fmt.Sprintf("step %d started: %s", se.i+1, oneLine(rec.Plan.Steps[se.i].Title, 80)))
		}
	}
	s.emit(se.ev)
}

// step runs step i as a subagent, after the steps it depends on.
func (s *session) step(rec *store.Research, i int, ended []chan struct{}, findings []string, events chan<- stepEvent, results chan<- stepResult) {
	plan := rec.Plan
	st := plan.Steps[i]
	var earlier strings.Builder
	if st.StepType == stepProcessing {
		for j := 0; j < i; j++ {
			select {
			case <-ended[j]:
			case <-s.ctx.Done():
			}
		}
		for j := 0; j < i; j++ {
			select {
			case <-ended[j]:
				if findings[j] != "" {
					earlier.WriteString(earlierStep(j, plan.Steps[j].Title, findings[j]))
				}
			default: // cancelled before it ended
			}
		}
	}
	typ := subagents.Researcher
	if st.StepType == stepProcessing {
		typ = subagents.Bash
	}
	if !s.r.opts.Subagents.Has(typ) {
		typ = subagents.GeneralPurpose
	}
	env := &tools.Env{
		ThreadID: s.in.ThreadID, RunID: s.in.RunID, ChatKey: s.in.ChatKey, UserID: s.in.UserID,
		Model: s.model.Name, Turn: 1,
		Emit: func(ev event.Event) { events <- stepEvent{i: i, ev: ev} },
	}
	if p := s.in.Persona; p != nil {
		env.Allow = p.Allow // the steps use only what the conversation's agent may
	}
	sources := &tools.Sources{}
	ctx := tools.WithSources(s.ctx, sources)
	out, err := s.r.opts.Subagents.Run(ctx, env, subagents.Step{
		Type:        typ,
		Description: fmt.Sprintf("Step %d: %s", i+1, oneLine(st.Title, 60)),
		Prompt:      stepBrief(rec, i, earlier.String()),
	})
	results <- stepResult{i: i, out: out, err: err, sources: sources.List()}
}

// earlierStep is step j's findings as a later step reads them.
func earlierStep(j int, title, findings string) string {
	return fmt.Sprintf("\n### Step %d: %s\n%s\n", j+1, tools.EscapeLine(title), findingsText(findings))
}

// stepBrief is everything step i's subagent knows. What people, the
// planner and web pages wrote is escaped (see tools.Escape): the topic,
// answers and titles onto their lines, descriptions and findings in place.
func stepBrief(rec *store.Research, i int, earlier string) string {
	plan := rec.Plan
	st := plan.Steps[i]
	var sb strings.Builder
	fmt.Fprintf(&sb, "Research topic: %s\n", tools.EscapeLine(rec.Topic))
	for _, q := range rec.Questions {
		if q.Answer != "" {
			fmt.Fprintf(&sb, "(Asked: %s Answer: %s)\n", tools.EscapeLine(q.Question), tools.EscapeLine(q.Answer))
		}
	}
	fmt.Fprintf(&sb, "\nThe plan, \"%s\" (other agents carry out the other steps):\n", tools.EscapeLine(plan.Title))
	for j, p := range plan.Steps {
		fmt.Fprintf(&sb, "%d. %s (%s)\n", j+1, tools.EscapeLine(p.Title), tools.EscapeLine(p.StepType))
	}
	fmt.Fprintf(&sb, "\nYour step, %d of %d: %s\n%s\n", i+1, len(plan.Steps), tools.EscapeLine(st.Title), tools.EscapeTags(st.Description))
	if st.StepType == stepProcessing {
		if earlier != "" {
			sb.WriteString("\nThe findings of the steps before yours:\n")
			sb.WriteString(earlier)
		}
		sb.WriteString("\nDo the computation in Python in the sandbox: write scripts under /mnt/user-data/workspace and run them with bash. Answer with the results (figures, tables) and say briefly how you computed them and from which data.")
	} else {
		sb.WriteString("\nSearch the web and read the best sources with web_fetch. Answer with your findings, each fact with the URL of the page it comes from.")
	}
	return sb.String()
}

// panel is the progress message's text while the plan runs.
func panel(rec *store.Research, extra string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "🔎 Research: %s\n%s", rec.Plan.Title, stepList(rec))
	if extra != "" {
		sb.WriteString("\n")
		sb.WriteString(extra)
	}
	return sb.String()
}
