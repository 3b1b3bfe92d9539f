package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/tools"
)

// remoteTool is one tool of an MCP server, as the agent sees it.
type remoteTool struct {
	c      *conn
	remote string // the tool's name on the server
	spec   tools.Spec
}

func (t *remoteTool) Spec() tools.Spec { return t.spec }

// Run calls the tool on the server within the call timeout.
func (t *remoteTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	name := t.spec.Name
	raw := bytes.TrimSpace(args)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		raw = []byte("{}")
	case !json.Valid(raw):
		return "", &tools.ArgError{Tool: name, Msg: "the arguments are not valid JSON"}
	case raw[0] != '{':
		return "", &tools.ArgError{Tool: name, Msg: "the arguments must be a JSON object"}
	}
	timeout := t.c.timeout(true)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	server := t.c.srv.Name
	var res *sdk.CallToolResult
	for attempt := 0; ; attempt++ {
		sctx := ctx // waiting for a server to start is not part of the call...
		if attempt > 0 {
			sctx = cctx // ...unless it is a reconnection in the middle of it
		}
		d, err := t.c.session(sctx)
		if err != nil {
			return "", err
		}
		res, err = d.sess.CallTool(cctx, &sdk.CallToolParams{Name: t.remote, Arguments: json.RawMessage(raw)})
		var rpcErr *jsonrpc.Error
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return "", fmt.Errorf("tool %s was cancelled: %w", name, ctx.Err())
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return "", fmt.Errorf("tool %s timed out after %s without an answer from MCP server %s", name, timeout, server)
		case errors.As(err, &rpcErr):
			return "", fmt.Errorf("MCP server %s rejected the call to %s: %s", server, t.remote, rpcErr.Message)
		case attempt == 0 && errors.Is(err, sdk.ErrSessionMissing) && t.c.expired(d, err):
			continue // the server forgot the session without running the call: reconnect and send it again
		default:
			t.c.lost(d, err)
			return "", fmt.Errorf("tool unavailable: MCP server %s went away during the call (%v); it is being restarted, try again later or do without it", server, err)
		}
		break
	}
	text := resultText(res)
	if res.IsError {
		if text == "" {
			text = fmt.Sprintf("MCP tool %s failed without saying why", name)
		}
		return "", errors.New(text)
	}
	return text, nil
}

// expired is called by a call that found the HTTP session d forgotten by
// the server: the run loop reconnects at once, unless d was young (then it
// is a failure like any other and false is returned).
func (c *conn) expired(d *dialed, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != d {
		return true // noticed already
	}
	if time.Since(c.since) < c.m.o.RestartBackoff {
		return false
	}
	c.cur, c.last = nil, d
	c.lastErr = err
	c.retryAt = time.Now()
	c.setPhaseLocked(Connecting)
	c.broadcastLocked()
	c.nudge()
	return true
}

// nudge tells the run loop to look at the connection again.
func (c *conn) nudge() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// lost is called by a tool call that found d dead.
func (c *conn) lost(d *dialed, err error) {
	c.fail(d, err)
	c.nudge()
}

// session returns the live connection, waiting while one is being made;
// in backoff it fails at once.
func (c *conn) session(ctx context.Context) (*dialed, error) {
	limit := time.NewTimer(c.timeout(false) + time.Second)
	defer limit.Stop()
	c.mu.Lock()
	for {
		switch {
		case c.stopped || c.m.ctx.Err() != nil:
			c.mu.Unlock()
			return nil, fmt.Errorf("tool unavailable: MCP server %s has been stopped", c.srv.Name)
		case c.cur != nil:
			d := c.cur
			c.mu.Unlock()
			return d, nil
		case c.failures > 0 && time.Now().Before(c.retryAt):
			err := c.lastErr
			c.mu.Unlock()
			return nil, fmt.Errorf("tool unavailable: MCP server %s is not running (last error: %v); try again later or do without it", c.srv.Name, err)
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-c.m.ctx.Done():
		case <-ctx.Done():
			return nil, fmt.Errorf("tool call cancelled while MCP server %s was starting: %w", c.srv.Name, ctx.Err())
		case <-limit.C:
			return nil, fmt.Errorf("tool unavailable: MCP server %s is still starting; try again later or do without it", c.srv.Name)
		}
		c.mu.Lock()
	}
}

// resultText renders a tool result for the model: its text, placeholders
// for media, and the structured content as JSON, capped in size.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, "[image omitted]")
		case *sdk.AudioContent:
			parts = append(parts, "[audio omitted]")
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", c.URI, c.Name))
		case *sdk.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "":
				parts = append(parts, r.Text)
			default:
				parts = append(parts, fmt.Sprintf("[binary resource omitted: %s]", r.URI))
			}
		default:
			parts = append(parts, "[content omitted]")
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !sameJSON(parts, b) {
			parts = append(parts, string(b))
		}
	}
	s := strings.Join(parts, "\n")
	if len(s) > maxResult {
		s = tools.Clip(s, maxResult) + fmt.Sprintf("\n[result truncated: it was %d bytes]", len(s))
	}
	return s
}

// sameJSON reports whether a text part already holds the JSON b (servers
// built with typed handlers send structured output as text too).
func sameJSON(parts []string, b []byte) bool {
	var want any
	if json.Unmarshal(b, &want) != nil {
		return false
	}
	for _, p := range parts {
		var got any
		if json.Unmarshal([]byte(p), &got) == nil && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}
