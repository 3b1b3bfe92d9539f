package lgwire

import (
	"encoding/json"
	"fmt"
	"strings"
)

// TaskKwargs are the additional_kwargs DeerFlow's backend stamps on a task
// tool's result (its UI's subtask card reads them, not the text): the
// subagent's status (completed, failed, cancelled or timed_out), with a
// brief of the result when it completed, else the error. content is the
// task tool's result, "Task "…" (type, id)\nStatus: <status>\nDuration:
// …[\nTokens: <in> in, <out> out]\n\n<text>" (subagents' forLead); nil
// when it is not one. The tokens become subagent_token_usage.
func TaskKwargs(content string) map[string]any {
	_, rest, _ := strings.Cut(content, "\n")
	line, rest, _ := strings.Cut(rest, "\n")
	status, ok := strings.CutPrefix(line, "Status: ")
	if !ok {
		return nil
	}
	head, text, _ := strings.Cut(rest, "\n\n")
	text = clipRunes(strings.TrimSpace(text), 2000)
	m := taskStatus(status, line, text)
	var in, out int
	for _, l := range strings.Split(head, "\n") {
		if n, _ := fmt.Sscanf(l, "Tokens: %d in, %d out", &in, &out); n == 2 {
			m["subagent_token_usage"] = map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": in + out}
		}
	}
	return m
}

// taskStatus is TaskKwargs' status and result (or error) for status,
// from the status line and the result's text.
func taskStatus(status, line, text string) map[string]any {
	switch status {
	case "completed":
		return map[string]any{"subagent_status": status, "subagent_result_brief": text}
	case "cancelled", "timed_out", "failed":
	default: // interrupted by a restart, or a status DeerFlow has no name for
		status = "failed"
	}
	if text == "" {
		text = "The task " + strings.ReplaceAll(line[len("Status: "):], "_", " ") + "."
	}
	return map[string]any{"subagent_status": status, "subagent_error": text}
}

// clipRunes cuts s to at most n characters.
func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// toolMessage is a tool call's result as LangChain's ToolMessage, in run
// runID ("" for a message from before runs were recorded).
func toolMessage(runID, callID, name, content string, failed bool) Message {
	m := newMessage("tool", content, ToolID(runID, callID))
	m.ToolCallID, m.Name, m.Status = callID, name, "success"
	if failed {
		m.Status = "error"
	}
	if name == "task" {
		for k, v := range TaskKwargs(content) {
			m.AdditionalKwargs[k] = v
		}
	}
	return m
}

// InputFiles are the virtual paths of the files a run's input message
// says were uploaded with it (DeerFlow's UI: the last human message's
// additional_kwargs.files[].path), as the client gave them: the caller
// checks them.
func InputFiles(raw json.RawMessage) []string {
	var obj struct {
		Messages []struct {
			Role   string `json:"role"`
			Type   string `json:"type"`
			Kwargs struct {
				Files []struct {
					Path string `json:"path"`
				} `json:"files"`
			} `json:"additional_kwargs"`
		} `json:"messages"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	var out []string
	for i := len(obj.Messages) - 1; i >= 0; i-- {
		m := obj.Messages[i]
		if k := strings.ToLower(m.Type + m.Role); k != "human" && k != "user" && k != "humanuser" {
			continue
		}
		for _, f := range m.Kwargs.Files {
			if f.Path != "" {
				out = append(out, f.Path)
			}
		}
		break
	}
	return out
}
