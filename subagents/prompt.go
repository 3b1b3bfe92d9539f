package subagents

import (
	"context"
	"fmt"
	"strings"

	"github.com/deerflow/deerflow/agent"
)

// PromptSection returns the lead's subagents section: when delegating pays
// off, how to brief a subagent, and the limits.
func (m *Manager) PromptSection() func(context.Context, *agent.Input) string {
	var types strings.Builder
	for _, k := range m.types {
		fmt.Fprintf(&types, "\n- %s: %s", k.Name, k.Description)
	}
	n, total := m.opts.MaxPerResponse, m.opts.MaxPerRun
	text := fmt.Sprintf(`<subagents>
You can delegate with the task tool. Each task call starts a subagent that works alone, in this conversation's workspace, in parallel with the other task calls of the same response; the tool waits for it and returns its final answer, so there is nothing to poll. The person watches each subagent's progress as its own reply.

Delegate only when it clearly pays off:
- the job splits into independent parts that can run at the same time (several topics to research, files to analyse, options to compare);
- a part takes many steps whose details you do not need (a long build, a broad search), so your own context stays focused.
Do it yourself when the job is small, when its steps depend on each other, or when you need the person's input. A subagent costs a whole model run and knows nothing of this conversation except your prompt: give it the goal, the context, the paths of relevant files and what its answer must contain.

Limits:
- at most %d task calls per response; further calls in the same response are refused;
- at most %d task calls in total while answering one message.
Put all the parts that can run in parallel into one response. With more parts than %d, run them in batches over several responses. Then combine the results into your answer; do not repeat the subagents' work.

Types:%s
</subagents>`, n, total, n, types.String())
	return agent.Static(text)
}
