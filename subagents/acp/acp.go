// Package acp hands a task to an external coding agent over the Agent
// Client Protocol: the invoke_acp_agent tool starts the configured
// program (in the conversation's sandbox when the caller provides one),
// opens a session in /mnt/user-data/workspace, sends the prompt, shows the
// agent's steps as subagent task events, and returns the agent's answer
// to the lead.
//
// The agent's file requests are served through Files, the conversation's
// jailed file access; terminal requests are refused; permission requests
// are put to the person in the chat as a question with the request's
// options as buttons, or answered by the agent's configured policy. Cancelling the tool's
// context sends session/cancel and then kills the program with everything
// it started.
package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/deerflow/deerflow/tools"
)

// Name is the tool's name, as in DeerFlow.
const Name = "invoke_acp_agent"

// Workspace is the session's working directory: the conversation's
// workspace as the sandbox shows it.
const Workspace = "/mnt/user-data/workspace"

// Agent is one external agent.
type Agent struct {
	Name        string
	Description string
	Command     string
	Args        []string
	Env         map[string]string // values are never logged
	Timeout     time.Duration     // 0 means 30 minutes
	// Permissions answers the agent's permission requests: Ask (also
	// ""), Allow or Deny.
	Permissions string
}

// Permission policies of an agent.
const (
	Ask   = "ask"   // the person is asked in the chat; with no one to ask, deny
	Allow = "allow" // accepted without asking
	Deny  = "deny"  // rejected without asking
)

// AskWait is how long a permission question waits for the person; no
// answer is taken as a rejection.
const AskWait = 10 * time.Minute

// Sandbox is the sandbox a program was prepared to run in (see
// bwrap.Isolated): Ready once it has started, Kill to end it and all it
// started, Release after it has been waited for.
type Sandbox interface {
	Ready(ctx context.Context) error
	Release()
	Kill() error
}

// Files is the conversation's jailed file access over virtual paths.
type Files interface {
	ReadText(threadID, path string) (string, error)
	WriteText(threadID, path, content string) error
}

// Options configures the tool.
type Options struct {
	// Agents are the agents the model may invoke.
	Agents []Agent
	// Isolate prepares cmd to run for thread threadID: in its sandbox
	// (box not nil), or on the host with cmd.Dir set to its workspace (box
	// nil). Nil runs cmd as is, in the current directory (tests).
	Isolate func(threadID string, a Agent, cmd *exec.Cmd) (ic *exec.Cmd, box Sandbox, err error)
	// Files serves the agent's file requests. Required.
	Files Files
	// Ask puts a question to the person userID ("channel:user") in the
	// conversation chatKey and waits for their choice of options (see
	// choice.Asks.Ask). Nil: permission requests of agents that ask are
	// rejected.
	Ask func(ctx context.Context, chatKey, userID, question string, options []string, wait time.Duration) (int, error)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Tool returns the invoke_acp_agent tool, or nil when no agents are
// configured.
func Tool(o Options) tools.Tool {
	if len(o.Agents) == 0 {
		return nil
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &tool{o: o}
}

type tool struct{ o Options }

type args struct {
	Agent  string `json:"agent"`
	Prompt string `json:"prompt"`
}

// Spec describes the tool with the configured agents' names.
func (t *tool) Spec() tools.Spec {
	var names, lines []string
	for _, a := range t.o.Agents {
		names = append(names, a.Name)
		line := "- " + a.Name
		if a.Description != "" {
			line += ": " + a.Description
		}
		lines = append(lines, line)
	}
	schema, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"agent":  map[string]any{"type": "string", "enum": names, "description": "Name of the ACP agent to invoke"},
			"prompt": map[string]any{"type": "string", "description": "The concise task prompt to send to the agent"},
		},
		"required": []string{"agent", "prompt"},
	})
	return tools.Spec{
		Name: Name,
		Description: "Invoke an external ACP-compatible coding agent and return its final response.\n\n" +
			"Available agents:\n" + strings.Join(lines, "\n") + "\n\n" +
			"The agent works in this conversation's workspace (" + Workspace + "): it can read and edit the files there, " +
			"and its changes are visible to your file tools afterwards. Give it a self-contained task description.",
		Parameters: schema,
	}
}

// Run invokes the agent the model named. Failures of the agent come back
// as the result text, so that the model can tell the user.
func (t *tool) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	in, err := tools.Decode[args](Name, raw, []string{"agent", "prompt"}, nil)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(t.o.Agents, func(a Agent) bool { return a.Name == in.Agent })
	if i < 0 {
		var names []string
		for _, a := range t.o.Agents {
			names = append(names, a.Name)
		}
		return "", &tools.ArgError{Tool: Name, Msg: fmt.Sprintf("unknown agent %q; available: %s", in.Agent, strings.Join(names, ", "))}
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return "", &tools.ArgError{Tool: Name, Msg: "prompt is empty"}
	}
	return t.invoke(ctx, t.o.Agents[i], in.Prompt), nil
}

// SelfTimed says the tool keeps its own time limit (each agent's
// timeout), so the run's tool timeout does not cut an invocation short.
func (t *tool) SelfTimed() bool { return true }
