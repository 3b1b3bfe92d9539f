package api_test

import (
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// BenchmarkAPIRunStream: one request through the API, as a client makes
// it: start a run on a thread, read its event stream to the end (the
// model streams a 12-piece answer at once). It measures the API's own
// cost around the agent: HTTP, the run queue, events, SSE framing.
func BenchmarkAPIRunStream(b *testing.B) {
	h := newHarness(b, config{})
	h.fake.Handle(func(req fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "the answer to " + lastUser(req) + ", in a dozen pieces of streamed text", Chunk: 6}
	})
	thread := h.createThread()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		run := h.startRun(thread, map[string]any{"input": msg("a question")})
		evs := h.collect(thread, run.RunID)
		if h.endStatus(evs) != "success" {
			b.Fatalf("run ended %s", dump(evs))
		}
	}
}
