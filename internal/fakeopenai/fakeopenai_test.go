package fakeopenai

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, s *Server, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

const hello = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

func TestStreamWireFormat(t *testing.T) {
	s := New(t)
	s.Script(Turn{
		Text:      "Let me check.",
		Reasoning: "hmm",
		ToolCalls: []ToolCall{{ID: "call_abc", Name: "read_file", Arguments: `{"path":"a.txt"}`}},
		Chunk:     9,
		Usage:     &Usage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30},
	})
	resp, body := post(t, s, hello)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q", ct)
	}
	const head = `data: {"id":"chatcmpl-fake1","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":"fp_fake","choices":[`
	const tail = `,"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n"
	want := head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null}` + tail +
		head + `{"index":0,"delta":{"content":null,"reasoning_content":"hmm"}` + tail +
		head + `{"index":0,"delta":{"content":"Let me ch"}` + tail +
		head + `{"index":0,"delta":{"content":"eck."}` + tail +
		head + `{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_file","arguments":""}}]}` + tail +
		head + `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\""}}]}` + tail +
		head + `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"a.txt\"}"}}]}` + tail +
		head + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}` + "\n\n" +
		head + `],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}` + "\n\n" +
		"data: [DONE]\n\n"
	if body != want {
		t.Errorf("stream:\n%s\nwant:\n%s", body, want)
	}
	for line := range strings.SplitSeq(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && data != "[DONE]" && !json.Valid([]byte(data)) {
			t.Errorf("invalid JSON event: %s", data)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m" || !reqs[0].Stream || !reqs[0].IncludeUsage || reqs[0].Last().Content != "hi" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestStreamWithoutUsage(t *testing.T) {
	s := New(t)
	s.Script(Turn{Text: "ok"})
	_, body := post(t, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if strings.Contains(body, `"usage"`) || !strings.HasSuffix(body, `"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n") {
		t.Errorf("body:\n%s", body)
	}
}

func TestCutAfter(t *testing.T) {
	s := New(t)
	s.Script(Turn{Text: "0123456789", Chunk: 2, CutAfter: 3})
	_, body := post(t, s, hello)
	if n := strings.Count(body, "data: "); n != 3 {
		t.Errorf("%d events, want 3:\n%s", n, body)
	}
	if strings.Contains(body, "finish_reason\":\"") || strings.Contains(body, "[DONE]") {
		t.Errorf("cut stream has an end:\n%s", body)
	}
}

func TestAbort(t *testing.T) {
	s := New(t)
	for _, chunk := range []int{2, -1} { // streamed, and written at once
		s.Script(Turn{Text: "0123456789", Chunk: chunk, CutAfter: 3, Abort: true})
		resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(hello))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("chunk %d: reading the aborted body: %v, want an unexpected EOF", chunk, err)
		}
		// CutAfter counts content events only: with the text in one delta
		// there are two (the role, the text), then half of the finish.
		want := 3
		if chunk < 0 {
			want = 2
		}
		body := string(b)
		full := strings.Count(body, "\n\n")
		last := body[strings.LastIndex(body, "\n\n")+2:]
		if full != want || !strings.HasPrefix(last, "data: {") || strings.HasSuffix(last, "}") {
			t.Errorf("chunk %d: %d whole events then %q, want %d and half of the next:\n%s", chunk, full, last, want, body)
		}
	}
	reqs := s.WaitRequests(2)
	if reqs[0].Time.IsZero() || reqs[1].Time.Before(reqs[0].Time) {
		t.Errorf("arrival times %v, %v", reqs[0].Time, reqs[1].Time)
	}
}

func TestStreamError(t *testing.T) {
	s := New(t)
	s.Script(Turn{Text: "par", StreamError: `{"message":"overloaded","type":"server_error","code":null}`})
	_, body := post(t, s, hello)
	if !strings.HasSuffix(body, `data: {"error":{"message":"overloaded","type":"server_error","code":null}}`+"\n\n") {
		t.Errorf("body:\n%s", body)
	}
}

func TestErrorTurns(t *testing.T) {
	s := New(t)
	s.Script(Turn{Status: 429, RetryAfter: "3"}, Turn{Status: 502, Body: "<html>bad gateway</html>"})
	resp, body := post(t, s, hello)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(body, `"code":"rate_limit_exceeded"`) {
		t.Errorf("429: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = post(t, s, hello)
	if resp.StatusCode != 502 || body != "<html>bad gateway</html>" {
		t.Errorf("502: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, s, hello)
	if resp.StatusCode != 500 || !strings.Contains(body, "no turn scripted for request #3") {
		t.Errorf("empty script: %d %s", resp.StatusCode, body)
	}
}

func TestKeyAndModels(t *testing.T) {
	s := New(t)
	s.Key = "sk-good"
	s.Models = []string{"m"}
	s.Script(Turn{Text: "ok"})
	resp, body := post(t, s, hello, "Authorization", "Bearer sk-bad")
	want := `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}` + "\n"
	if resp.StatusCode != 401 || body != want {
		t.Errorf("bad key: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, s, strings.Replace(hello, `"m"`, `"gpt-x"`, 1), "Authorization", "Bearer sk-good")
	if resp.StatusCode != 404 || !strings.Contains(body, `"code":"model_not_found"`) {
		t.Errorf("unknown model: %d %s", resp.StatusCode, body)
	}
	resp, _ = post(t, s, hello, "Authorization", "Bearer sk-good")
	if resp.StatusCode != 200 {
		t.Errorf("good: %d", resp.StatusCode)
	}
	if got := s.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-bad" {
		t.Errorf("recorded Authorization %q", got)
	}
}

func TestValidate(t *testing.T) {
	const call = `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]}`
	user := `{"role":"user","content":"hi"}`
	msgs := func(m ...string) string {
		return `{"model":"m","stream":true,"messages":[` + strings.Join(m, ",") + `]}`
	}
	tests := []struct {
		name, body, want string // want: "" for accepted, else part of the error message
	}{
		{"ok", msgs(user), ""},
		{"tool round", msgs(user, call, `{"role":"tool","tool_call_id":"c2","content":"x"}`, `{"role":"tool","tool_call_id":"c1","content":"y"}`, user), ""},
		{"array content", msgs(`{"role":"user","content":[{"type":"text","text":"hi"}]}`), ""},
		{"no model", `{"messages":[` + user + `]}`, "you must provide a model parameter"},
		{"no messages", `{"model":"m","messages":[]}`, "too short"},
		{"bad json", `{"model":`, "could not parse the JSON body"},
		{"tool without content", msgs(user, call, `{"role":"tool","tool_call_id":"c1"}`, `{"role":"tool","tool_call_id":"c2","content":"y"}`), "messages[2].content"},
		{"tool null content", msgs(user, call, `{"role":"tool","tool_call_id":"c1","content":null}`, `{"role":"tool","tool_call_id":"c2","content":"y"}`), "messages[2].content"},
		{"unknown tool_call_id", msgs(user, call, `{"role":"tool","tool_call_id":"c9","content":"x"}`), "must be a response to a preceeding message"},
		{"tool without call", msgs(user, `{"role":"tool","tool_call_id":"c1","content":"x"}`), "must be a response to a preceeding message"},
		{"missing result", msgs(user, call, `{"role":"tool","tool_call_id":"c1","content":"x"}`, user), "did not have response messages: c2"},
		{"missing result at end", msgs(user, call), "did not have response messages: c1, c2"},
		{"index in request", msgs(user, `{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, `{"role":"tool","tool_call_id":"c1","content":"x"}`), "'index' was unexpected"},
		{"no arguments", msgs(user, `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f"}}]}`, `{"role":"tool","tool_call_id":"c1","content":"x"}`), "function.arguments"},
		{"empty assistant", msgs(user, `{"role":"assistant"}`), "messages[1].content"},
		{"bad role", msgs(`{"role":"bot","content":"x"}`), "Invalid value: 'bot'"},
		{"bad tool name", `{"model":"m","tools":[{"type":"function","function":{"name":"a b"}}],"messages":[` + user + `]}`, "does not match pattern"},
		{"stream_options without stream", `{"model":"m","stream_options":{"include_usage":true},"messages":[` + user + `]}`, "only allowed when 'stream' is enabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t)
			s.Script(Turn{Text: "ok"})
			resp, body := post(t, s, tt.body)
			if tt.want == "" {
				if resp.StatusCode != 200 {
					t.Fatalf("refused: %d %s", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != 400 || !strings.Contains(body, tt.want) {
				t.Fatalf("got %d %s, want 400 with %q", resp.StatusCode, body, tt.want)
			}
			var e struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Type != "invalid_request_error" {
				t.Errorf("not an OpenAI error body: %s", body)
			}
		})
	}
}

func TestMethodAndPath(t *testing.T) {
	s := New(t)
	resp, err := http.Get(s.URL + "/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	resp, err = http.Post(s.URL+"/completions", "application/json", strings.NewReader(hello))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("wrong path: %d", resp.StatusCode)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("recorded %d requests", n)
	}
}

func TestNonStreaming(t *testing.T) {
	s := New(t)
	s.Script(Turn{ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a":1}`}}})
	_, body := post(t, s, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	var c struct {
		Object  string
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].FinishReason != "tool_calls" ||
		c.Choices[0].Message.Content != nil || c.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"a":1}` ||
		c.Choices[0].Message.ToolCalls[0].ID == "" {
		t.Errorf("body %s", body)
	}
}

func TestHandle(t *testing.T) {
	s := New(t)
	s.Script(Turn{Text: "scripted", Chunk: -1})
	s.Handle(func(r Request) Turn { return Turn{Text: "handled " + r.Last().Content, Chunk: -1} })
	_, b1 := post(t, s, hello)
	_, b2 := post(t, s, hello)
	if !strings.Contains(b1, `"scripted"`) || !strings.Contains(b2, `"handled hi"`) {
		t.Errorf("replies:\n%s\n%s", b1, b2)
	}
}

// TestHoldAndDisconnect is the pattern for /stop tests: wait until the
// request is held, go away, and see the fake count the cancellation.
func TestHoldAndDisconnect(t *testing.T) {
	s := New(t)
	s.Script(Turn{Text: "abcdefghij", Chunk: 2, Hold: make(chan struct{}), HoldAfter: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/chat/completions", strings.NewReader(hello))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var events []string
	for len(events) < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			events = append(events, line)
		}
	}
	if s.InFlight() != 1 || s.Cancelled() != 0 {
		t.Errorf("in flight %d, cancelled %d", s.InFlight(), s.Cancelled())
	}
	cancel()
	s.WaitCancelled(1)
	s.WaitIdle()
	if _, err := io.ReadAll(r); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v", err)
	}
}

func TestPieces(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"abc", 3, []string{"abc"}},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"aéé", 2, []string{"aé", "é"}},
		{"日本語", 1, []string{"日", "本", "語"}},
		{"abcdef", -1, []string{"abcdef"}},
	}
	for _, tt := range tests {
		got := pieces(tt.s, tt.n)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("pieces(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n tab\t", "\x00\x1f", "日本", "bad\xffutf8", "\xf4\x96", "<&>\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, b, err)
		}
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("round trip of %q = %q", s, got)
		}
	})
}

func TestModelsAndKeep(t *testing.T) {
	s := New(t)
	s.Models = []string{"a", "b"}
	s.KeepRequests = 2
	resp, err := http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) != 2 || list.Data[1].ID != "b" {
		t.Errorf("models: %v %+v", err, list)
	}
	s.Handle(func(r Request) Turn { return Turn{Chunk: -1} })
	for _, m := range []string{"a", "b", "a"} {
		post(t, s, strings.Replace(hello, `"m"`, `"`+m+`"`, 1))
	}
	reqs := s.WaitRequests(3)
	if len(reqs) != 2 || reqs[0].Model != "b" || reqs[1].Model != "a" {
		t.Errorf("kept %+v", reqs)
	}
}
