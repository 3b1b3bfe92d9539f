package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// Step types of a plan.
const (
	stepResearch   = "research"
	stepProcessing = "processing"
)

const plannerPrompt = `<role>
You are the planner of a research team. You turn a research topic into a plan that other agents carry out: research steps search the web and read pages; processing steps compute with Python in a sandbox, on what the research steps found. Their findings are then written up for the person.
</role>

<rules>
- Use at most %d steps; fewer when fewer cover the topic well.
- Research steps run at the same time, so each must stand on its own: its description is all its agent knows besides the topic. Say precisely what to find out: the questions, the angles, the data, the period.
- Use "processing" only for calculations, statistics or tables built from the findings; a processing step runs after every step listed before it and gets their findings.
- Cover what the topic calls for: the facts and current state, background, the main actors and their positions, figures and statistics, comparisons, trends and outlook.
- Write the title, thought and steps in the language of the topic.
</rules>

<output>
Answer with a single JSON object and nothing else, in exactly this shape:
{"title": "…", "thought": "…", "steps": [{"title": "…", "description": "…", "step_type": "research"}]}
- title: a title for the research.
- thought: one or two sentences on how the plan approaches the topic.
- step_type: "research" or "processing".%s
</output>`

const clarifyRule = `
If the topic is too ambiguous to plan well (it could mean quite different things, or its scope is unclear in a way that changes the plan), you may instead answer {"question": "…"} with one short question for the person, in their language. Ask only when the answer would change the plan.`

const acceptRule = `
If the person's reply simply accepts the current plan, answer {"accepted": true} instead of a plan.`

// plannerOut is the planner's answer: a plan, a question or an acceptance.
type plannerOut struct {
	plan     *store.ResearchPlan
	question string
	accepted bool
}

// askPlanner asks the model for a plan, re-asking once when its answer is
// not a valid one. ask allows a clarifying question instead; feedback, when
// set, asks for a revision of rec.Plan.
func (r *Researcher) askPlanner(ctx context.Context, m agent.ModelRef, rec *store.Research, feedback string, ask bool) (plannerOut, error) {
	extra := ""
	if ask {
		extra = clarifyRule
	}
	if feedback != "" {
		extra = acceptRule
	}
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: fmt.Sprintf(plannerPrompt, r.opts.MaxSteps, extra)},
		{Role: llm.RoleUser, Content: plannerRequest(rec, feedback)},
	}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		text, err := llm.Complete(ctx, m.Model, &llm.Request{Model: m.ID, Messages: msgs, MaxTokens: m.MaxTokens, Temperature: m.Temperature})
		if err != nil {
			return plannerOut{}, err
		}
		out, err := parsePlan(text, r.opts.MaxSteps, ask, feedback != "", attempt > 0)
		if err == nil {
			return out, nil
		}
		lastErr = err
		r.log.InfoContext(ctx, "the planner's answer is not a valid plan", "thread", rec.ThreadID, "attempt", attempt+1, "err", err)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: text},
			llm.Message{Role: llm.RoleUser, Content: "That answer is not a valid plan: " + err.Error() + ". Answer again with only the JSON object, in exactly the shape given."})
	}
	return plannerOut{}, fmt.Errorf("the model's plan was invalid twice (%v)", lastErr)
}

// plannerRequest is the planner's task: the topic, the answers to its
// questions and, for a revision, the plan and the person's changes; their
// words escaped (see tools.Escape).
func plannerRequest(rec *store.Research, feedback string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Research topic: %s\n", tools.EscapeLine(rec.Topic))
	for _, q := range rec.Questions {
		if q.Answer != "" {
			fmt.Fprintf(&sb, "\nYou asked: %s\nThe person answered: %s\n", tools.EscapeLine(q.Question), tools.EscapeLine(q.Answer))
		}
	}
	if feedback != "" && rec.Plan != nil {
		plan, _ := json.Marshal(rec.Plan) // "<" as \u003c, but not its look-alikes
		fmt.Fprintf(&sb, "\nThe current plan:\n%s\n\nThe person replied to it:\n%s\n\nRevise the plan as they ask and answer with the whole revised plan.", tools.EscapeTags(string(plan)), tools.EscapeTags(feedback))
	}
	return sb.String()
}

// parsePlan reads the planner's answer (a code fence or a sentence around
// the JSON is fine) and validates it. lenient keeps the first max steps of
// a plan that has too many instead of refusing it.
func parsePlan(text string, maxSteps int, question, accept, lenient bool) (plannerOut, error) {
	obj, ok := llm.JSONObject(text)
	if !ok {
		return plannerOut{}, errors.New("it contains no JSON object")
	}
	var raw struct {
		Title    *string            `json:"title"`
		Thought  *string            `json:"thought"`
		Steps    *[]json.RawMessage `json:"steps"`
		Question string             `json:"question"`
		Accepted bool               `json:"accepted"`
	}
	if err := json.Unmarshal([]byte(obj), &raw); err != nil {
		return plannerOut{}, fmt.Errorf("its JSON does not parse (%v)", jsonProblem(err))
	}
	if q := strings.TrimSpace(raw.Question); question && q != "" && raw.Steps == nil {
		return plannerOut{question: q}, nil
	}
	if accept && raw.Accepted && raw.Steps == nil {
		return plannerOut{accepted: true}, nil
	}
	switch {
	case raw.Title == nil || strings.TrimSpace(*raw.Title) == "":
		return plannerOut{}, errors.New(`"title" is missing or empty`)
	case raw.Steps == nil:
		return plannerOut{}, errors.New(`"steps" is missing`)
	case len(*raw.Steps) == 0:
		return plannerOut{}, errors.New(`"steps" is empty`)
	case len(*raw.Steps) > maxSteps && !lenient:
		return plannerOut{}, fmt.Errorf("it has %d steps, more than the %d allowed", len(*raw.Steps), maxSteps)
	}
	plan := &store.ResearchPlan{Title: oneLine(*raw.Title, 200)}
	if raw.Thought != nil {
		plan.Thought = strings.TrimSpace(*raw.Thought)
	}
	for i, rs := range *raw.Steps {
		if i == maxSteps {
			break
		}
		st, err := parseStep(i, rs)
		if err != nil {
			return plannerOut{}, err
		}
		plan.Steps = append(plan.Steps, st)
	}
	return plannerOut{plan: plan}, nil
}

// parseStep reads and validates step i of a plan.
func parseStep(i int, rs json.RawMessage) (store.ResearchPlanStep, error) {
	var st struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		StepType    string `json:"step_type"`
	}
	if err := json.Unmarshal(rs, &st); err != nil {
		return store.ResearchPlanStep{}, fmt.Errorf("step %d is not an object with string fields title, description and step_type", i+1)
	}
	st.StepType = strings.ToLower(strings.TrimSpace(st.StepType))
	switch {
	case strings.TrimSpace(st.Title) == "":
		return store.ResearchPlanStep{}, fmt.Errorf("step %d has no title", i+1)
	case strings.TrimSpace(st.Description) == "":
		return store.ResearchPlanStep{}, fmt.Errorf("step %d has no description", i+1)
	case st.StepType != stepResearch && st.StepType != stepProcessing:
		return store.ResearchPlanStep{}, fmt.Errorf(`step %d has step_type %q; it must be "research" or "processing"`, i+1, st.StepType)
	}
	return store.ResearchPlanStep{
		Title: oneLine(st.Title, 200), Description: strings.TrimSpace(st.Description), StepType: st.StepType,
	}, nil
}

// jsonProblem is a JSON error without Go's type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%q has the wrong type", te.Field)
	}
	return err.Error()
}

// Replies that accept a plan without asking the model: every word is one
// of these, and at least one says yes ("ok", "Yes, go ahead!", "the plan
// looks good"); or the whole reply is a phrase below ("好的", "👍").
var (
	approvalWords = wordSet("ok okay k yes y yep yeah sure go start begin run proceed lgtm approve approved accept accepted agreed fine perfect great good")
	approvalFill  = wordSet("please thanks thank you ahead it do now then that that's thats this plan the is all right alright looks look sounds let's lets and")
	approvalWhole = wordSet("好 好的 可以 开始 行 确认 同意 没问题 👍 ✅ 👌")
)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// approves reports whether reply plainly accepts the plan.
func approves(reply string) bool {
	s := strings.ToLower(strings.TrimSpace(reply))
	words := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (unicode.IsPunct(r) && r != '\'') || r == '～' || r == '~'
	})
	if len(words) == 1 && approvalWhole[words[0]] {
		return true
	}
	yes := false
	for _, w := range words {
		switch {
		case approvalWords[w]:
			yes = true
		case !approvalFill[w]:
			return false
		}
	}
	return yes
}

// planMessage is the plan as the person reads it: numbered steps and how
// to answer.
func planMessage(rec *store.Research, maxRevisions int) string {
	p := rec.Plan
	var sb strings.Builder
	if rec.Revisions > 0 {
		fmt.Fprintf(&sb, "📋 **Revised research plan: %s**\n\n", p.Title)
	} else {
		fmt.Fprintf(&sb, "📋 **Research plan: %s**\n\n", p.Title)
	}
	if p.Thought != "" {
		sb.WriteString(p.Thought)
		sb.WriteString("\n\n")
	}
	for i, st := range p.Steps {
		kind := ""
		if st.StepType == stepProcessing {
			kind = " _(processing: Python on the findings so far)_"
		}
		fmt.Fprintf(&sb, "%d. **%s**%s\n%s\n", i+1, st.Title, kind, tools.Clip(st.Description, 600))
	}
	sb.WriteString("\nReply **ok** to start, or tell me what to change. /stop drops the plan.")
	if rec.Revisions >= maxRevisions && maxRevisions > 0 {
		sb.WriteString(" (This is the last revision I make; after it, reply ok to start.)")
	}
	return sb.String()
}
