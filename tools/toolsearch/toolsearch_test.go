package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/tools"
)

func specNames(specs []tools.Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

func TestMatch(t *testing.T) {
	specs := []tools.Spec{
		{Name: "github_create_issue", Description: "Create an issue in a repository."},
		{Name: "github_list_issues", Description: "List the issues of a repository."},
		{Name: "docs_lookup", Description: "Look a term up in the Docs."},
		{Name: "docs_tool4", Description: "Fourth."},
		{Name: "docs_tool42", Description: "Forty-second."},
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"tool42", []string{"docs_tool42"}},
		{"TOOL4", []string{"docs_tool4", "docs_tool42"}}, // the exact suffix first
		{"issue", []string{"github_create_issue", "github_list_issues"}},
		{"create issue", []string{"github_create_issue", "github_list_issues"}},
		{"docs", []string{"docs_lookup", "docs_tool4", "docs_tool42"}},
		{"term", []string{"docs_lookup"}}, // from the description
		{"nothing here", []string{}},
		{"select:docs_tool42, GITHUB_LIST_ISSUES,unknown,docs_tool42", []string{"docs_tool42", "github_list_issues"}},
	} {
		if got := specNames(Match(specs, c.query)); !slices.Equal(got, c.want) {
			t.Errorf("Match(%q) = %v, want %v", c.query, got, c.want)
		}
	}
	var many []tools.Spec
	for i := range 20 {
		many = append(many, tools.Spec{Name: fmt.Sprintf("s_t%d", i)})
	}
	if got := Match(many, "t"); len(got) != MaxResults {
		t.Errorf("%d results, want at most %d", len(got), MaxResults)
	}
}

// registry holds n MCP-like tools "docs_tool<i>" and one built-in.
func registry(n int) *tools.Registry {
	reg := tools.NewRegistry(tools.Func("bash", "Run a command.", func(context.Context, struct{}) (string, error) { return "", nil }))
	for i := range n {
		reg.Add(tools.Func(fmt.Sprintf("docs_tool%d", i), fmt.Sprintf("[docs] Volume %d.\nDetails.", i), func(context.Context, struct {
			Term string `json:"term"`
		}) (string, error) {
			return "", nil
		}))
	}
	return reg
}

func isDocs(name string) bool { return strings.HasPrefix(name, "docs_") }

func TestDeferral(t *testing.T) {
	for _, c := range []struct {
		tools, threshold int
		active           bool
	}{
		{20, 20, false}, {21, 20, true}, {100, 0, false}, {100, -1, false}, {0, 20, false},
	} {
		reg := registry(c.tools)
		s := New(Options{Tools: reg, Deferrable: isDocs, Threshold: c.threshold})
		reg.Add(s.Tool())
		if s.Active() != c.active {
			t.Errorf("%d tools, threshold %d: active %v", c.tools, c.threshold, s.Active())
		}
		if c.tools > 0 && s.Deferred("docs_tool0") != c.active {
			t.Errorf("%d tools, threshold %d: docs_tool0 deferred %v", c.tools, c.threshold, !c.active)
		}
		if s.Deferred("bash") {
			t.Error("a built-in tool is deferred")
		}
		if s.Deferred(Name) == c.active {
			t.Errorf("%d tools, threshold %d: tool_search hidden %v", c.tools, c.threshold, !c.active)
		}
	}
	// Tools joining later (an MCP server connecting) turn deferral on.
	reg := registry(3)
	s := New(Options{Tools: reg, Deferrable: isDocs, Threshold: 3})
	if s.Active() {
		t.Fatal("active at the threshold")
	}
	reg.Add(tools.Func("docs_more", "More.", func(context.Context, struct{}) (string, error) { return "", nil }))
	if !s.Active() {
		t.Error("not active once above the threshold")
	}
}

func TestSearchTool(t *testing.T) {
	reg := registry(30)
	s := New(Options{Tools: reg, Deferrable: isDocs, Threshold: 20})
	tool := s.Tool()
	reg.Add(tool)
	if len(reg.Specs()) != 32 {
		t.Fatal("the registry's specs")
	}
	desc := tool.Spec().Description
	if !strings.Contains(desc, "\n- docs_tool7: Volume 7.") || strings.Contains(desc, "Details") || strings.Contains(desc, "bash") {
		t.Errorf("description:\n%s", desc)
	}
	var loaded []string
	env := &tools.Env{Load: func(n string) { loaded = append(loaded, n) }, Allow: func(n string) bool { return n != "docs_tool8" }}
	ctx := tools.WithEnv(context.Background(), env)
	out, err := tool.Run(ctx, json.RawMessage(`{"query":"select:docs_tool7,docs_tool8"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(loaded, []string{"docs_tool7"}) {
		t.Errorf("loaded %v (docs_tool8 is not allowed)", loaded)
	}
	js := out[strings.Index(out, "["):]
	var res []struct {
		Name       string
		Parameters json.RawMessage
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	if len(res) != 1 || res[0].Name != "docs_tool7" || !strings.Contains(string(res[0].Parameters), `"term"`) {
		t.Errorf("result:\n%s", out)
	}
	if _, err := tool.Run(ctx, json.RawMessage(`{"query":"zebra"}`)); err == nil || !strings.Contains(err.Error(), "no deferred tool matches") {
		t.Errorf("no match: %v", err)
	}
	if _, err := tool.Run(ctx, json.RawMessage(`{}`)); !tools.IsArgError(err) {
		t.Errorf("missing query: %v", err)
	}
}
