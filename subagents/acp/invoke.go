package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/tools"
)

// defaultTimeout bounds an invocation when Agent.Timeout is 0.
const defaultTimeout = 30 * time.Minute

// maxAnswer caps the agent's answer given to the lead.
const maxAnswer = 20000

// errTimedOut is the cancellation cause of an invocation out of time.
var errTimedOut = errors.New("acp: invocation timed out")

// invocation is one call of the tool: one program, one session, one
// prompt. It reports as a subagent task.
type invocation struct {
	t        *tool
	agent    Agent
	threadID string
	files    Files
	env      *tools.Env

	mu    sync.Mutex
	ev    event.Task
	steps []string // the latest progress lines
}

// invoke runs prompt through agent a and returns the result for the lead.
func (t *tool) invoke(ctx context.Context, a Agent, prompt string) string {
	env := tools.EnvFrom(ctx)
	inv := &invocation{t: t, agent: a, threadID: env.ThreadID, files: t.o.Files, env: env, ev: event.Task{
		ID: newID(), Description: describe(a.Name, prompt), Type: a.Name, Status: event.TaskRunning, Started: time.Now(),
	}}
	inv.emit(event.TaskStarted{Task: inv.ev})
	log := t.o.Logger.With("agent", a.Name, "task", inv.ev.ID)
	log.InfoContext(ctx, "acp: invoking agent", "prompt_chars", len(prompt))

	timeout := a.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	rctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer cancel()
	answer, reason, err := inv.run(rctx, prompt)
	status, body := inv.outcome(rctx, answer, reason, err, timeout)
	dur := time.Since(inv.ev.Started)
	if err != nil {
		log.WarnContext(ctx, "acp: agent ended", "status", status, "err", err)
	} else {
		log.InfoContext(ctx, "acp: agent ended", "status", status, "stop_reason", reason, "duration", dur)
	}
	inv.mu.Lock()
	inv.ev.Status, inv.ev.Duration, inv.ev.Result, inv.ev.Line = status, dur, tools.Clip(body, 600), ""
	done := inv.ev
	inv.emit(event.TaskDone{Task: done})
	inv.mu.Unlock()
	return fmt.Sprintf("ACP agent %q (%s)\nStatus: %s\nDuration: %s\n\n%s",
		a.Name, done.ID, status, dur.Round(100*time.Millisecond), tools.Clip(body, maxAnswer))
}

// run starts the program, opens a session in the workspace and sends the
// prompt. When ctx ends first, the SDK sends session/cancel; the program
// is then stopped (and killed) before run returns.
func (inv *invocation) run(ctx context.Context, prompt string) (answer string, reason sdk.StopReason, err error) {
	p, err := inv.t.start(ctx, inv.threadID, inv.agent)
	if err != nil {
		return "", "", fmt.Errorf("starting %s: %w", inv.agent.Command, err)
	}
	defer p.stop(time.Second)
	c := &client{inv: inv, ctx: ctx}
	conn := sdk.NewClientSideConnection(c, p.stdin, p.stdout)
	// No SetLogger: in v0.13.0 it races with the connection's reader.
	defer func() {
		if err != nil && ctx.Err() == nil {
			p.stop(time.Second) // reaped: all it wrote to stderr is in the tail
			if s := p.stderr.String(); s != "" {
				err = fmt.Errorf("%w (its last output: %s)", err, s)
			}
		}
	}()
	if _, err = conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion:    sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}},
		ClientInfo:         &sdk.Implementation{Name: "deerflow", Version: "1"},
	}); err != nil {
		return "", "", fmt.Errorf("initialize: %w", err)
	}
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: Workspace, McpServers: []sdk.McpServer{}})
	if err != nil {
		return "", "", fmt.Errorf("session/new: %w", err)
	}
	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(prompt)}})
	if err != nil {
		return c.answer(), "", fmt.Errorf("session/prompt: %w", err)
	}
	return c.answer(), resp.StopReason, nil
}

// outcome is the task status and the text for the lead.
func (inv *invocation) outcome(ctx context.Context, answer string, reason sdk.StopReason, err error, timeout time.Duration) (status, body string) {
	switch {
	case errors.Is(context.Cause(ctx), errTimedOut):
		return event.TaskTimedOut, fmt.Sprintf("The agent did not finish within its time limit of %s and was stopped. %s", timeout, inv.lastSteps())
	case ctx.Err() != nil || reason == sdk.StopReasonCancelled:
		return event.TaskCancelled, "The agent was cancelled before it finished."
	case err != nil:
		return event.TaskFailed, "The agent failed: " + err.Error()
	case reason == sdk.StopReasonRefusal:
		return event.TaskFailed, "The agent refused the task. " + answer
	}
	if answer == "" {
		answer = "(the agent gave no answer)"
	}
	if reason == sdk.StopReasonMaxTokens || reason == sdk.StopReasonMaxTurnRequests {
		answer = fmt.Sprintf("(The agent stopped early: %s.)\n\n%s", reason, answer)
	}
	return event.TaskCompleted, answer
}

// progress reports one step of the agent.
func (inv *invocation) progress(line string) {
	line = tools.Clip(strings.TrimSpace(line), 200)
	if line == "" {
		return
	}
	inv.mu.Lock()
	inv.steps = append(inv.steps, line)
	if len(inv.steps) > 5 {
		inv.steps = inv.steps[len(inv.steps)-5:]
	}
	defer inv.mu.Unlock() // events go out in order
	inv.ev.Line = line
	inv.emit(event.TaskProgress{Task: inv.ev})
	inv.ev.Line = ""
}

func (inv *invocation) lastSteps() string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if len(inv.steps) == 0 {
		return "(it reported no steps)"
	}
	return "Its last steps:\n" + strings.Join(inv.steps, "\n")
}

// emit reports ev to whoever watches the run.
func (inv *invocation) emit(ev event.Event) {
	if inv.env.Emit != nil {
		inv.env.Emit(ev)
	}
}

// describe is the task's title in chat: the agent and the start of the
// prompt's first line.
func describe(agent, prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	return tools.Clip(agent+": "+line, 60)
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "acp_" + hex.EncodeToString(b[:])
}
