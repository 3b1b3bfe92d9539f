package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/store"
)

// TestGatewayUploadsNote: the note names the listed paths that are the
// thread's uploads, with a document's Markdown version; a path outside
// the uploads, one that climbs out, or one not uploaded is left out.
func TestGatewayUploadsNote(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	h.upload(200, [2]string{"prices.csv", "item,price\nmilk,1.20\n"}, [2]string{"notes.txt", "hello"})
	note := h.g.UploadsNote(thread, []string{"/mnt/user-data/uploads/prices.csv", "/mnt/user-data/uploads/../outputs/x.txt",
		"/etc/passwd", "/mnt/user-data/uploads/missing.txt", "/mnt/user-data/uploads/prices.csv"})
	if !strings.HasPrefix(note, "<uploaded_files>") || strings.Count(note, "\n- ") != 1 ||
		!strings.Contains(note, "- /mnt/user-data/uploads/prices.csv → Markdown: /mnt/user-data/uploads/prices.csv.md\n") {
		t.Errorf("note:\n%s", note)
	}
	for _, bad := range []string{"notes.txt", "outputs/x", "passwd", "missing"} {
		if strings.Contains(note, bad) {
			t.Errorf("the note names %s:\n%s", bad, note)
		}
	}
	if n := h.g.UploadsNote(thread, []string{"/etc/passwd"}); n != "" {
		t.Errorf("a note for no upload: %q", n)
	}
}

// apiThread stores API thread id with msgs, and runs with their records.
func apiThread(t *testing.T, st *store.Store, id string, msgs []*store.Message, runs ...*store.Run) {
	t.Helper()
	err := st.Update(func(tx *store.Tx) error {
		th := &store.Thread{ID: id, ChatKey: lgwire.ChatKey(id), PromptTokens: 120, CompletionTokens: 30}
		if err := tx.PutThread(th); err != nil {
			return err
		}
		var entries []lgwire.RunEntry
		for _, r := range runs {
			entries = append(entries, lgwire.RunEntry{ID: r.ID})
			if err := tx.PutRun(r); err != nil {
				return err
			}
		}
		if err := lgwire.SetRunEntries(tx, id, entries); err != nil {
			return err
		}
		return tx.AppendMessages(id, msgs...)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGatewayMessagesPage: a thread's history backwards, a page at a
// time, each oldest first with thread-wide seqs, as DeerFlow's
// RunMessage; hidden messages left out; a task result with its
// subagent_status and run-scoped id.
func TestGatewayMessagesPage(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	task := "Task \"Count\" (general-purpose, task_1)\nStatus: timed_out\nDuration: 5m\n\nThe subagent did not finish."
	apiThread(t, h.store, "th1", []*store.Message{
		{Role: "user", Content: "count", RunID: "r1", Time: now},
		{Role: "assistant", RunID: "r1", ToolCalls: []store.ToolCall{{ID: "c1", Name: "task", Arguments: `{}`}}, Time: now},
		{Role: "tool", Name: "task", ToolCallID: "c1", Content: task, RunID: "r1", Time: now},
		{Role: "assistant", Content: "done", RunID: "r1", Time: now},
		{Role: "user", Content: "again", RunID: "r2", Time: now},
		{Role: "user", Content: "hidden", RunID: "r2", Hidden: true, Time: now},
		{Role: "assistant", Content: "again done", RunID: "r2", Time: now},
	})
	page := h.json("GET", "/api/threads/th1/messages/page?limit=2", nil, 200)
	hasKeys(t, "page", page, "data", "has_more", "next_before_seq")
	data := page["data"].([]any)
	if len(data) != 2 || page["has_more"] != true || page["next_before_seq"] != float64(5) {
		t.Fatalf("first page %v", page)
	}
	row := hasKeys(t, "row", data[1], "run_id", "seq", "content", "metadata", "created_at")
	if row["seq"] != float64(7) || row["run_id"] != "r2" || row["metadata"].(map[string]any)["caller"] != "lead_agent" ||
		row["content"].(map[string]any)["content"] != "again done" || row["created_at"] != "2026-05-01T12:00:00Z" {
		t.Errorf("newest row %v", row)
	}
	page = h.json("GET", "/api/threads/th1/messages/page?limit=2&before_seq=5", nil, 200)
	data = page["data"].([]any)
	if len(data) != 2 || page["has_more"] != true || page["next_before_seq"] != float64(3) {
		t.Fatalf("second page %v", page)
	}
	tool := data[0].(map[string]any)["content"].(map[string]any)
	kw := tool["additional_kwargs"].(map[string]any)
	if tool["id"] != "r1-tool-c1" || tool["type"] != "tool" || kw["subagent_status"] != "timed_out" || kw["subagent_error"] != "The subagent did not finish." {
		t.Errorf("task result %v", tool)
	}
	page = h.json("GET", "/api/threads/th1/messages/page?before_seq=3", nil, 200)
	if data = page["data"].([]any); len(data) != 2 || page["has_more"] != false || page["next_before_seq"] != nil {
		t.Errorf("last page %v", page)
	}
	h.json("GET", "/api/threads/nope/messages/page", nil, 404)
	h.json("GET", "/api/threads/th1/messages/page?limit=0", nil, 422)
	h.json("GET", "/api/threads/th1/messages/page?before_seq=x", nil, 422)
	if err := h.store.Update(func(tx *store.Tx) error { return tx.PutThread(&store.Thread{ID: "chat1", ChatKey: "telegram:1"}) }); err != nil {
		t.Fatal(err)
	}
	h.json("GET", "/api/threads/chat1/messages/page", nil, 404) // a channel's conversation is not the API's
	empty := h.json("GET", "/api/threads/th1/messages/page?before_seq=1", nil, 200)
	if d, ok := empty["data"].([]any); !ok || len(d) != 0 || empty["has_more"] != false {
		t.Errorf("an empty page %v", empty)
	}
}

// TestGatewayTokenUsage: the thread's tokens, by model over its runs,
// all the lead agent's.
func TestGatewayTokenUsage(t *testing.T) {
	h := newHarness(t, testConfig(), 1<<20)
	apiThread(t, h.store, "th2", nil,
		&store.Run{ID: "r1", ThreadID: "th2", Model: "fast", Status: store.RunDone, PromptTokens: 50, CompletionTokens: 10},
		&store.Run{ID: "r2", ThreadID: "th2", Model: "fast", Status: store.RunDone, PromptTokens: 40, CompletionTokens: 10},
		&store.Run{ID: "r3", ThreadID: "th2", Model: "deep", Status: store.RunDone, PromptTokens: 30, CompletionTokens: 10})
	u := h.json("GET", "/api/threads/th2/token-usage", nil, 200)
	hasKeys(t, "usage", u, "thread_id", "total_tokens", "total_input_tokens", "total_output_tokens", "total_runs", "by_model", "by_caller")
	if u["thread_id"] != "th2" || u["total_tokens"] != float64(150) || u["total_input_tokens"] != float64(120) ||
		u["total_output_tokens"] != float64(30) || u["total_runs"] != float64(3) {
		t.Errorf("usage %v", u)
	}
	fast := u["by_model"].(map[string]any)["fast"].(map[string]any)
	deep := u["by_model"].(map[string]any)["deep"].(map[string]any)
	if fast["tokens"] != float64(110) || fast["runs"] != float64(2) || deep["tokens"] != float64(40) || deep["runs"] != float64(1) {
		t.Errorf("by_model %v", u["by_model"])
	}
	c := hasKeys(t, "by_caller", u["by_caller"], "lead_agent", "subagent", "middleware")
	if c["lead_agent"] != float64(150) || c["subagent"] != float64(0) {
		t.Errorf("by_caller %v", c)
	}
	h.json("GET", "/api/threads/nope/token-usage", nil, 404)
}
