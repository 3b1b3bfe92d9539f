// Command fakeacp is an external coding agent for tests, speaking the
// Agent Client Protocol on stdin and stdout through the SDK's agent side.
//
// A prompt "edit <path>" reports a step, reads the file through the
// client, asks permission to edit it, reports a second step, and (when
// allowed) writes the file back with a line appended; its answer names
// the file's line count, its working directory and $FAKEACP_GREETING. A
// prompt containing "hang" reports a step and then never answers, not
// even to session/cancel or the end of its stdin, so that only killing it
// ends it.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

type agent struct {
	conn    *sdk.AgentSideConnection
	cwd     string
	hanging atomic.Bool // then even the end of stdin does not end it
}

func main() {
	a := &agent{}
	a.conn = sdk.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	<-a.conn.Done()
	for a.hanging.Load() {
		time.Sleep(time.Hour) // (an empty select would be a deadlock the runtime ends)
	}
}

func (a *agent) Initialize(context.Context, sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber}, nil
}

func (a *agent) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	a.cwd = p.Cwd
	return sdk.NewSessionResponse{SessionId: "fake-session"}, nil
}

func (a *agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	var text string
	for _, b := range p.Prompt {
		if b.Text != nil {
			text += b.Text.Text
		}
	}
	if strings.Contains(text, "hang") {
		a.hanging.Store(true)
		a.step(ctx, p.SessionId, "1", "Thinking very hard")
		select {} // not even session/cancel ends this
	}
	path, ok := strings.CutPrefix(strings.TrimSpace(text), "edit ")
	if !ok {
		a.say(ctx, p.SessionId, "I only edit files.")
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	return a.edit(ctx, p.SessionId, path)
}

// edit reads path, asks to edit it and appends a line when allowed.
func (a *agent) edit(ctx context.Context, sid sdk.SessionId, path string) (sdk.PromptResponse, error) {
	a.say(ctx, sid, "Let me look at the file.\n")
	a.step(ctx, sid, "1", "Reading "+path)
	r, err := a.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sid, Path: path})
	if err != nil {
		a.say(ctx, sid, "I could not read it: "+err.Error())
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	perm, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sid,
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: "2", Title: sdk.Ptr("Editing " + path)},
		Options: []sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "yes"},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "no"},
		},
	})
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	a.step(ctx, sid, "2", "Editing "+path)
	if perm.Outcome.Selected == nil || perm.Outcome.Selected.OptionId != "yes" {
		a.say(ctx, sid, "I was not allowed to edit "+path+".")
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	if _, err := a.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sid, Path: path, Content: r.Content + "edited by fakeacp\n"}); err != nil {
		a.say(ctx, sid, "I could not write it: "+err.Error())
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	wd, _ := os.Getwd()
	a.say(ctx, sid, fmt.Sprintf("Edited %s (it had %d lines). session cwd=%s pwd=%s greeting=%s",
		path, strings.Count(r.Content, "\n"), a.cwd, wd, os.Getenv("FAKEACP_GREETING")))
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

func (a *agent) say(ctx context.Context, sid sdk.SessionId, text string) {
	_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateAgentMessageText(text)})
}

func (a *agent) step(ctx context.Context, sid sdk.SessionId, id, title string) {
	_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.StartToolCall(sdk.ToolCallId(id), title)})
}

func (a *agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (a *agent) Cancel(context.Context, sdk.CancelNotification) error { return nil }

func (a *agent) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, nil
}

func (a *agent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, nil
}

func (a *agent) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, nil
}

func (a *agent) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, nil
}
