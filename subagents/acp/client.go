package acp

import (
	"context"
	"errors"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deerflow/deerflow/tools"
)

// errNoTerminal answers terminal requests: the client does not offer
// terminals (it does not advertise the capability), so an agent runs its
// commands itself, inside its sandbox.
var errNoTerminal = errors.New("this client does not offer terminals; run commands yourself")

// client is our side of one session: it serves the agent's requests and
// turns its updates into progress.
type client struct {
	inv *invocation
	ctx context.Context // the invocation's: /stop and its time limit end it

	mu   sync.Mutex
	text strings.Builder // the agent's message since its last step
	all  strings.Builder // every message chunk: the answer
}

var _ sdk.Client = (*client)(nil)

// SessionUpdate collects the agent's message and reports its steps: a
// tool call shows as "› title", a plan as its entry in progress.
func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil {
			c.mu.Lock()
			c.text.WriteString(t.Text)
			c.all.WriteString(t.Text)
			c.mu.Unlock()
		}
	case u.ToolCall != nil:
		c.step("› " + u.ToolCall.Title)
	case u.Plan != nil:
		for _, e := range u.Plan.Entries {
			if e.Status == sdk.PlanEntryStatusInProgress {
				c.step("› " + e.Content)
			}
		}
	}
	return nil
}

// step reports the first line of what the agent said since its last
// step, then line.
func (c *client) step(line string) {
	c.mu.Lock()
	said := firstLine(c.text.String())
	c.text.Reset()
	c.mu.Unlock()
	if said != "" {
		c.inv.progress(said)
	}
	c.inv.progress(line)
}

// answer is everything the agent said.
func (c *client) answer() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.TrimSpace(c.all.String())
}

// ReadTextFile reads through the conversation's jailed file access.
func (c *client) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	text, err := c.inv.files.ReadText(c.inv.threadID, p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(err.Error())
	}
	return sdk.ReadTextFileResponse{Content: lines(text, p.Line, p.Limit)}, nil
}

// WriteTextFile writes through the conversation's jailed file access.
func (c *client) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	if err := c.inv.files.WriteText(c.inv.threadID, p.Path, p.Content); err != nil {
		return sdk.WriteTextFileResponse{}, sdk.NewInvalidParams(err.Error())
	}
	return sdk.WriteTextFileResponse{}, nil
}

// CreateTerminal is refused; see errNoTerminal.
func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNoTerminal
}

// KillTerminal is refused; see errNoTerminal.
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNoTerminal
}

// TerminalOutput is refused; see errNoTerminal.
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNoTerminal
}

// ReleaseTerminal is refused; see errNoTerminal.
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNoTerminal
}

// WaitForTerminalExit is refused; see errNoTerminal.
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNoTerminal
}

// lines is text from line (1-based, nil for the first) on, at most limit
// lines (nil for all).
func lines(text string, line, limit *int) string {
	if line == nil && limit == nil {
		return text
	}
	ls := strings.SplitAfter(text, "\n")
	start := 0
	if line != nil && *line > 1 {
		start = min(*line-1, len(ls))
	}
	end := len(ls)
	if limit != nil && *limit >= 0 && start+*limit < end {
		end = start + *limit
	}
	return strings.Join(ls[start:end], "")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "\n")
	return tools.Clip(s, 200)
}
