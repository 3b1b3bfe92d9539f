// Package probe sends each configured chat model a few tiny requests
// (`deerflow check --probe-models`) and reports what works, with a fix for
// each common configuration mistake: a base_url without its /v1, a model
// id the provider does not know, a refused key. Usable is the lighter
// check `deerflow serve` makes before it starts.
//
// It imports config, llm and internal/redact of ours.
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/llm"
)

const (
	Timeout  = 30 * time.Second // bounds each probe request, and GET /models
	Parallel = 4                // models probed at once
)

// NewClient returns the client that calls model m: built the way serve
// builds it, bounded by Timeout and without retries.
type NewClient func(m config.Model) llm.Model

// result is what the probe found out about one model. The columns read
// "ok", "FAIL", "no" or "-" (not tried).
type result struct {
	index      int
	model      config.Model
	stream     string
	tools      string
	vision     string
	reasoning  string        // "yes" when any reasoning text arrived
	firstToken time.Duration // to the first text or reasoning; 0: none
	problems   []string      // what failed, each with how to fix it
}

// Run sends every model a few tiny requests, at most Parallel models at
// once, and writes to w a table of what works and a line for each failure
// saying how to fix it. It returns the exit code: 1 if any model failed.
func Run(ctx context.Context, models []config.Model, newClient NewClient, w io.Writer) int {
	results := make([]*result, len(models))
	slots := make(chan struct{}, Parallel)
	var wg sync.WaitGroup
	for i, m := range models {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			results[i] = check(ctx, i, m, newClient(m))
		})
	}
	wg.Wait()
	return report(w, results)
}

// check streams one short answer from model i, then offers a tool and,
// for a model with supports_vision, sends a one-pixel image. When the
// first request fails the others are not tried: they would fail the same
// way.
func check(ctx context.Context, i int, m config.Model, c llm.Model) *result {
	p := &result{index: i, model: m, stream: "-", tools: "-", vision: "-", reasoning: "-"}
	if err := p.probeStream(ctx, c); err != nil {
		p.stream = "FAIL"
		p.problems = append(p.problems, diagnose(ctx, i, m, err))
		return p
	}
	p.stream = "ok"
	p.probeTools(ctx, c)
	if m.SupportsVision {
		p.probeVision(ctx, c)
	}
	return p
}

// probeStream asks for a one-word answer, timing the first token.
func (p *result) probeStream(ctx context.Context, c llm.Model) error {
	start := time.Now()
	p.reasoning = "no"
	for ch, err := range c.Stream(ctx, p.request("Reply with the single word: ok")) {
		switch {
		case err != nil:
			p.reasoning = "-"
			return err
		case ch.Done != nil:
			p.sawReasoning(ch.Done.Message.Reasoning)
			return nil
		case p.firstToken == 0 && (ch.Text != "" || ch.Reasoning != ""):
			p.firstToken = max(time.Since(start), time.Millisecond)
		}
		p.sawReasoning(ch.Reasoning)
	}
	p.reasoning = "-"
	return errors.New("the stream ended without an answer")
}

// probeTools offers one trivial tool and asks the model to call it.
func (p *result) probeTools(ctx context.Context, c llm.Model) {
	req := p.request("Call the ping tool now, with no arguments.")
	req.Tools = []llm.ToolSpec{{
		Name:        "ping",
		Description: "Checks that tool calls work. Call it whenever you are asked to.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
	}}
	resp, err := llm.Collect(c.Stream(ctx, req), nil)
	switch {
	case err != nil:
		p.tools = "FAIL"
		p.problems = append(p.problems, "tools: "+failure(err)+"; deerflow's agent works through tool calls")
	case !calls(resp, "ping"):
		p.tools = "no"
		p.sawReasoning(resp.Message.Reasoning)
		p.problems = append(p.problems, "tools: the model answered without calling the tool it was asked to call; deerflow's agent works through tool calls, so pick a model (or provider) with function calling")
	default:
		p.tools = "ok"
		p.sawReasoning(resp.Message.Reasoning)
	}
}

// probeVision sends a one-pixel image.
func (p *result) probeVision(ctx context.Context, c llm.Model) {
	req := p.request("What colour is this image? Answer in one word.")
	req.Messages[0].Images = []llm.Image{{MIME: "image/png", Data: onePixelPNG()}}
	resp, err := llm.Collect(c.Stream(ctx, req), nil)
	if err != nil {
		p.vision = "FAIL"
		p.problems = append(p.problems, fmt.Sprintf("vision: %s; if the model takes no images, set models[%d].supports_vision to false", failure(err), p.index))
		return
	}
	p.vision = "ok"
	p.sawReasoning(resp.Message.Reasoning)
}

func (p *result) request(text string) *llm.Request {
	return &llm.Request{
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: text}},
		MaxTokens:   p.model.MaxTokens,
		Temperature: p.model.Temperature,
	}
}

func (p *result) sawReasoning(text string) {
	if strings.TrimSpace(text) != "" {
		p.reasoning = "yes"
	}
}

func calls(resp *llm.Response, tool string) bool {
	for _, c := range resp.Message.ToolCalls {
		if c.Name == tool {
			return true
		}
	}
	return false
}

// onePixelPNG is a 1x1 red PNG.
func onePixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	png.Encode(&b, img) // writing to memory cannot fail
	return b.Bytes()
}

// report writes the table, then each problem on a line of its own, and
// returns the exit code.
func report(w io.Writer, probes []*result) int {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tSTREAMING\tTOOLS\tVISION\tREASONING\tFIRST TOKEN")
	for _, p := range probes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.model.Name, p.stream, p.tools, p.vision, p.reasoning, latency(p.firstToken))
	}
	tw.Flush()
	failed := 0
	for _, p := range probes {
		for _, line := range p.problems {
			fmt.Fprintf(w, "%s: %s\n", p.model.Name, line)
		}
		if len(p.problems) > 0 {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "%d of %d model(s) failed the probe\n", failed, len(probes))
		return 1
	}
	fmt.Fprintf(w, "all %d model(s) work\n", len(probes))
	return 0
}

func latency(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
