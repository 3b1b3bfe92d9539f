package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The provider quirks of tool calls and of what goes back to the provider
// (thought signatures, reasoning_details, a call the length limit cut),
// through the built binary; the harness is in providers_e2e_test.go.

// geminiCalls is what the binary must send back of
// gemini_thought_signature_write_file.sse's calls to the model that made
// them: the thought signature on the first call, as it came.
const geminiCalls = `[
	{"id":"function-call-f3b9ecb3-d55f-4076-98c8-b13e9d1c0e01","type":"function",
	 "function":{"name":"write_file","arguments":"{\"path\":\"paris.txt\",\"content\":\"Paris: 21°C\"}"},
	 "extra_content":{"google":{"thought_signature":"CiQBVKhc7hRp3Xz0pRTQ7yQ1sig+A=="}}},
	{"id":"function-call-335673ad-913e-42d1-bbf5-387c8ab80f44","type":"function",
	 "function":{"name":"write_file","arguments":"{\"path\":\"london.txt\",\"content\":\"London: 18°C\"}"}}]`

// TestBinaryProviderGeminiThoughtSignature: Gemini's thought signature on
// the first of two parallel calls goes back on that call, and on no other:
// in the same run, and in the next message's request after a restart (it
// is kept with the thread); never to another model.
func TestBinaryProviderGeminiThoughtSignature(t *testing.T) {
	t.Parallel()
	c := startQuirkChat(t, ownStream("gemini_thought_signature_write_file.sse"),
		llmStream("openai_text_usage.sse"), llmStream("openai_text_usage.sse"), llmStream("openai_text_usage.sse"))
	c.say("weather in Paris and London?")
	c.waitShown(hello)
	if diff := cmp.Diff(map[string]string{"paris.txt": "Paris: 21°C", "london.txt": "London: 18°C"}, c.workspaceFiles()); diff != "" {
		t.Errorf("the calls wrote (-want +got):\n%s", diff)
	}
	back := decodeRequest(t, c.model.requests()[1])
	if got := back.roles(); got != "system,user,assistant,tool,tool" {
		t.Errorf("the request after the calls has %s", got)
	}
	if diff := cmp.Diff(jsonOf(t, geminiCalls), back.toolCalls()); diff != "" {
		t.Errorf("the calls sent back (-want +got):\n%s", diff)
	}

	c.restart()
	c.say("and tomorrow?")
	c.waitShown(hello, hello)
	later := decodeRequest(t, c.model.requests()[2])
	if diff := cmp.Diff(jsonOf(t, geminiCalls), later.toolCalls()); diff != "" {
		t.Errorf("the calls in the next message's request, after a restart (-want +got):\n%s", diff)
	}

	c.say("/models other")
	c.waitShown(hello, hello, switched)
	c.say("and the day after?")
	c.waitShown(hello, hello, switched, hello)
	other := decodeRequest(t, c.model.requests()[3])
	stripped := jsonOf(t, geminiCalls).([]any)
	delete(stripped[0].(map[string]any), "extra_content")
	if diff := cmp.Diff(stripped, other.toolCalls()); other.Model != "other-model" || diff != "" {
		t.Errorf("the request to %s carries the calls as (-want +got):\n%s", other.Model, diff)
	}
	c.checkRequests(4)
}

// TestBinaryProviderGeminiCallsWithoutIndexOrID: two whole calls in two
// deltas with neither index nor id stay two calls: both run, and the model
// gets two results, each under the id its call went back with.
func TestBinaryProviderGeminiCallsWithoutIndexOrID(t *testing.T) {
	t.Parallel()
	c := startQuirkChat(t, ownStream("gemini_calls_without_index_or_id_write_file.sse"), llmStream("openai_text_usage.sse"))
	c.say("weather in Paris and London?")
	c.waitShown(hello)
	c.checkRequests(2)
	if diff := cmp.Diff(map[string]string{"paris.txt": "weather Paris", "london.txt": "weather London"}, c.workspaceFiles()); diff != "" {
		t.Errorf("the calls wrote (-want +got):\n%s", diff)
	}
	back := decodeRequest(t, c.model.requests()[1])
	if got := back.roles(); got != "system,user,assistant,tool,tool" {
		t.Errorf("the request after the calls has %s", got)
	}
	var args, ids []string
	for _, call := range back.toolCalls() {
		call := call.(map[string]any)
		args = append(args, fmt.Sprint(call["function"].(map[string]any)["arguments"]))
		ids = append(ids, fmt.Sprint(call["id"]))
	}
	wantArgs := []string{`{"path":"paris.txt","content":"weather Paris"}`, `{"path":"london.txt","content":"weather London"}`}
	if diff := cmp.Diff(wantArgs, args); diff != "" {
		t.Errorf("the calls sent back (-want +got):\n%s", diff)
	}
	results := back.toolResults()
	if len(ids) != 2 || ids[0] == "" || ids[0] == ids[1] || len(results) != 2 {
		t.Fatalf("calls sent back with ids %q, results %v; want two distinct ids with a result each", ids, results)
	}
	for _, id := range ids {
		if r, ok := results[id]; !ok || strings.HasPrefix(r, "Error") {
			t.Errorf("call %s: result %q", id, r)
		}
	}
}

// TestBinaryProviderLengthToolCall: finish_reason "length" cut the second
// of two calls mid-arguments. The whole call is not run (its file is not
// written), the first one is; the model is told, in the cut call's
// result, and writes the file again, whole.
func TestBinaryProviderLengthToolCall(t *testing.T) {
	t.Parallel()
	c := startQuirkChat(t, llmStream("length_tool_call.sse"), ownStream("write_file_retry.sse"), llmStream("openai_text_usage.sse"))
	release := c.model.holdAt(2) // the model's next try waits for the check
	c.say("read a.txt and write b.txt")
	told := decodeRequest(t, c.model.waitRequests(2)[1])
	if diff := cmp.Diff(map[string]string{}, c.workspaceFiles()); diff != "" {
		t.Errorf("after the cut batch the workspace has (-want +got):\n%s", diff)
	}
	results := told.toolResults()
	if got, want := results["call_write"], "Error: this call of write_file was cut off at the model's output length limit"+
		" before its arguments were complete, so it was not run. You may call it again with shorter arguments"+
		" (for example, write a long file in several parts)."; got != want {
		t.Errorf("the model was told of the cut call %q, want %q", got, want)
	}
	// The whole call ran: read_file itself says there is no a.txt.
	if r := results["call_read"]; !strings.Contains(r, "/mnt/user-data/workspace/a.txt does not exist") {
		t.Errorf("the whole call got %q, want read_file's answer", r)
	}
	release()
	c.waitShown(hello)
	c.checkRequests(3)
	if diff := cmp.Diff(map[string]string{"b.txt": "lorem ipsum"}, c.workspaceFiles()); diff != "" {
		t.Errorf("after the model's next try the workspace has (-want +got):\n%s", diff)
	}
}

// openRouterDetails is the reasoning_details of
// openrouter_reasoning_details.sse as they must go back: the text pieces
// of index 0 joined, with their signature; the encrypted part as it came.
const openRouterDetails = `[
	{"type":"reasoning.text","text":"Let me think.","signature":"EqQBCkYIBxgCKkDUmHSz3Q==","format":"anthropic-claude-v1","index":0},
	{"type":"reasoning.encrypted","data":"gAAAAABoVbXHZ7Q==","format":"anthropic-claude-v1","index":1}]`

// TestBinaryProviderOpenRouterReasoningDetails: OpenRouter's
// reasoning_details on an answer go back with that answer in the next
// message's request, to the same model; not to another one.
func TestBinaryProviderOpenRouterReasoningDetails(t *testing.T) {
	t.Parallel()
	c := startQuirkChat(t, llmStream("openrouter_reasoning_details.sse"), llmStream("openai_text_usage.sse"), llmStream("openai_text_usage.sse"))
	c.say("hi")
	c.waitShown("Hi there!")
	c.say("how are you?")
	c.waitShown("Hi there!", hello)
	next := decodeRequest(t, c.model.requests()[1])
	if got := next.roles(); got != "system,user,assistant,user" {
		t.Fatalf("the second message's request has %s", got)
	}
	answer := next.Messages[2]
	if answer["content"] != "Hi there!" {
		t.Errorf("the answer went back as %q", answer["content"])
	}
	if diff := cmp.Diff(jsonOf(t, openRouterDetails), answer["reasoning_details"]); diff != "" {
		t.Errorf("reasoning_details sent back (-want +got):\n%s", diff)
	}

	c.say("/models other")
	c.waitShown("Hi there!", hello, switched)
	c.say("still there?")
	c.waitShown("Hi there!", hello, switched, hello)
	other := decodeRequest(t, c.model.requests()[2])
	for i, m := range other.Messages {
		if _, ok := m["reasoning_details"]; ok {
			t.Errorf("the request to %s carries reasoning_details on message %d", other.Model, i)
		}
	}
	if other.Model != "other-model" || len(other.Messages) != 6 {
		t.Errorf("the request after /models went to %s with %d messages, want other-model with 6", other.Model, len(other.Messages))
	}
	c.checkRequests(3)
}

// TestBinaryProviderCutCallSentBackAsJSON: after finish_reason "length"
// cut a call mid-arguments, the request that tells the model must carry
// every call's arguments as JSON. Providers that read them refuse a
// request whose arguments are not: Ollama's OpenAI-compatible endpoint
// answers 400 "invalid tool call arguments" (openai.FromCompletionToolCall).
// Against such a provider the person must still get the answer after the
// model's next try.
func TestBinaryProviderCutCallSentBackAsJSON(t *testing.T) {
	t.Parallel()
	c := startQuirkChat(t, llmStream("length_tool_call.sse"), ownStream("write_file_retry.sse"), llmStream("openai_text_usage.sse"))
	c.model.refuseBadArgs()
	c.tg.WaitTimeout = 10 * time.Second // the answer takes well under a second
	c.say("read a.txt and write b.txt")
	told := decodeRequest(t, c.model.waitRequests(2)[1])
	for _, call := range told.toolCalls() {
		fn := call.(map[string]any)["function"].(map[string]any)
		if args := fmt.Sprint(fn["arguments"]); !json.Valid([]byte(args)) {
			t.Errorf("the request after the cut sends %s's arguments back as %q, not JSON", fn["name"], args)
		}
	}
	c.waitShown(hello)
}
