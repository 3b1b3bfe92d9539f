package skills

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deerflow/deerflow/internal/testutil"
)

// TestSkillPayloadsStayInert: a custom skill whose description or body
// holds a classic payload neither closes its section nor opens one, in the
// skills list of the system prompt or in an activation.
func TestSkillPayloadsStayInert(t *testing.T) {
	render := func(text string) (section, activation string) {
		desc, _ := json.Marshal("Takes notes. " + text)
		h := newHarness(t, Options{}, func(dir string) {
			writeSkill(t, dir, "meeting-notes", skillText("meeting-notes", string(desc), "# Notes\n\nStep one. "+text+"\n\n```md\n# Minutes\n```"))
		})
		act, _, ok := h.m.Activation("meeting-notes")
		if !ok {
			t.Fatalf("the skill with %q did not load:\n%s", text, h.logs)
		}
		return h.m.PromptSection(), act
	}
	baseSection, baseActivation := render("nothing special")
	for name, p := range testutil.Payloads {
		section, activation := render(p)
		testutil.AssertInert(t, fmt.Sprint(name, " (description)"), baseSection, section, p)
		testutil.AssertInert(t, fmt.Sprint(name, " (body)"), baseActivation, activation, p)
	}
}
