package research

import (
	"fmt"
	"strings"
	"testing"
)

func TestParsePlan(t *testing.T) {
	step := func(title, typ string) string {
		return fmt.Sprintf(`{"title": %q, "description": "Do %s.", "step_type": %q}`, title, title, typ)
	}
	steps := func(n int) string {
		var s []string
		for i := range n {
			s = append(s, step(fmt.Sprint("S", i+1), "research"))
		}
		return strings.Join(s, ",")
	}
	valid := `{"title": "T", "thought": "Why.", "steps": [` + step("A", "research") + `,` + step("B", "processing") + `]}`
	tests := []struct {
		name     string
		text     string
		question bool // a question is allowed
		accept   bool // an acceptance is allowed
		lenient  bool
		want     string // the plan as "title: step/type, ...", "?question", "accepted"
		err      string // part of the error, when it fails
	}{
		{name: "plain", text: valid, want: "T: A/research B/processing"},
		{name: "fenced", text: "```json\n" + valid + "\n```", want: "T: A/research B/processing"},
		{name: "sentence around", text: "Here is the plan: " + valid + " Hope it helps.", want: "T: A/research B/processing"},
		{name: "extra fields", text: `{"locale": "en", "has_enough_context": false, "title": "T", "thought": "", "steps": [{"title": "A", "description": "x", "step_type": "research", "need_search": true}]}`, want: "T: A/research"},
		{name: "no thought", text: `{"title": "T", "steps": [` + step("A", "research") + `]}`, want: "T: A/research"},
		{name: "step type case and spaces", text: `{"title": "T", "steps": [` + step("A", " Processing ") + `]}`, want: "T: A/processing"},
		{name: "too many steps", text: `{"title": "T", "steps": [` + steps(6) + `]}`, err: "it has 6 steps, more than the 5 allowed"},
		{name: "too many steps, lenient", text: `{"title": "T", "steps": [` + steps(6) + `]}`, lenient: true, want: "T: S1/research S2/research S3/research S4/research S5/research"},
		{name: "wrong step type", text: `{"title": "T", "steps": [` + step("A", "analysis") + `]}`, err: `step 1 has step_type "analysis"`},
		{name: "no step type", text: `{"title": "T", "steps": [{"title": "A", "description": "x"}]}`, err: `step 1 has step_type ""`},
		{name: "wrong step type, lenient", text: `{"title": "T", "steps": [` + step("A", "analysis") + `]}`, lenient: true, err: `step_type "analysis"`},
		{name: "step without title", text: `{"title": "T", "steps": [` + step("A", "research") + `, {"description": "x", "step_type": "research"}]}`, err: "step 2 has no title"},
		{name: "step without description", text: `{"title": "T", "steps": [{"title": "A", "step_type": "research"}]}`, err: "step 1 has no description"},
		{name: "step not an object", text: `{"title": "T", "steps": ["A"]}`, err: "step 1 is not an object"},
		{name: "no title", text: `{"thought": "", "steps": [` + step("A", "research") + `]}`, err: `"title" is missing or empty`},
		{name: "blank title", text: `{"title": "  ", "steps": [` + step("A", "research") + `]}`, err: `"title" is missing or empty`},
		{name: "no steps", text: `{"title": "T"}`, err: `"steps" is missing`},
		{name: "empty steps", text: `{"title": "T", "steps": []}`, err: `"steps" is empty`},
		{name: "steps wrong type", text: `{"title": "T", "steps": "A then B"}`, err: `"steps" has the wrong type`},
		{name: "not JSON", text: "I would start with sales.", err: "it contains no JSON object"},
		{name: "broken JSON", text: `{"title": "T", "steps": [}`, err: "its JSON does not parse"},
		{name: "question allowed", text: `{"question": " Which countries? "}`, question: true, want: "?Which countries?"},
		{name: "question not allowed", text: `{"question": "Which countries?"}`, err: `"title" is missing`},
		{name: "question with a plan is the plan", text: `{"question": "Q?", "title": "T", "steps": [` + step("A", "research") + `]}`, question: true, want: "T: A/research"},
		{name: "accepted", text: "```json\n{\"accepted\": true}\n```", accept: true, want: "accepted"},
		{name: "accepted not allowed", text: `{"accepted": true}`, err: `"title" is missing`},
		{name: "accepted false", text: `{"accepted": false}`, accept: true, err: `"title" is missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := parsePlan(tt.text, 5, tt.question, tt.accept, tt.lenient)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one with %q (out %+v)", err, tt.err, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch {
			case out.question != "":
				got = "?" + out.question
			case out.accepted:
				got = "accepted"
			case out.plan != nil:
				var s []string
				for _, st := range out.plan.Steps {
					s = append(s, st.Title+"/"+st.StepType)
				}
				got = out.plan.Title + ": " + strings.Join(s, " ")
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestApproves(t *testing.T) {
	yes := []string{"ok", "OK", "OK!", " ok. ", "Okay", "yes", "Yes please", "go ahead", "Go ahead!", "lgtm", "Looks good.",
		"sounds good", "ok, go", "start it", "👍", "✅", "👌", "好的", "好的。", "可以", "开始！", "没问题", "ok~",
		"Yes, go ahead!", "the plan looks good", "ok let's go"}
	no := []string{"", "no", "ok but drop step 3", "ok, but add prices", "yes, and add a step on batteries", "not ok",
		"make step 2 about prices", "okay?? what about step 3", "不好", "好的，但是删掉第三步", "👎", "stop",
		"don't start", "not good", "no, that's not good", "go to the second step first", "good, but shorter"}
	for _, s := range yes {
		if !approves(s) {
			t.Errorf("approves(%q) = false, want true", s)
		}
	}
	for _, s := range no {
		if approves(s) {
			t.Errorf("approves(%q) = true, want false", s)
		}
	}
}
