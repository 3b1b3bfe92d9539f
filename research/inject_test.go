package research

import (
	"testing"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/store"
)

// TestResearchPayloadsStayInert pushes each classic payload through every
// field of a research that people, the planner or web pages wrote, into
// the planner's, a step's and the reporter's requests.
func TestResearchPayloadsStayInert(t *testing.T) {
	rec := func(p string) *store.Research {
		return &store.Research{
			Topic:     "EV batteries " + p,
			Questions: []store.ResearchQuestion{{Question: "Which years? " + p, Answer: "2020 on " + p}},
			Plan: &store.ResearchPlan{Title: "Batteries " + p, Steps: []store.ResearchPlanStep{
				{Title: "Prices " + p, Description: "Find prices.\n" + p, StepType: stepResearch},
				{Title: "Trend", Description: "Fit a trend.", StepType: stepProcessing},
			}},
			Steps: []store.ResearchStep{
				{Status: event.TaskCompleted, Findings: "Prices fell. " + p},
				{Status: event.TaskCompleted, Findings: "A trend."},
			},
		}
	}
	requests := func(p string) map[string]string {
		r := rec(p)
		sources := []store.ResearchSource{{URL: "https://example.com/a", Title: "Page " + p}}
		return map[string]string{
			"planner":  plannerRequest(r, "Fewer steps. "+p),
			"step":     stepBrief(r, 1, earlierStep(0, r.Plan.Steps[0].Title, r.Steps[0].Findings)),
			"reporter": reportRequest(r, sources),
		}
	}
	base := requests("nothing special")
	for name, p := range testutil.Payloads {
		for which, got := range requests(p) {
			testutil.AssertInert(t, name+" ("+which+")", base[which], got, p)
		}
	}
}
