package agent

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// countedTool is a tool that counts its calls.
func countedTool(name string, calls *atomic.Int32) tools.Tool {
	return tools.Func(name, "Test tool "+name+".", func(context.Context, echoArgs) (string, error) {
		calls.Add(1)
		return name + " ran", nil
	})
}

// noSecret is a persona's Allow refusing the tool "secret".
func noSecret(name string) bool { return name != "secret" }

// toolResultsOf returns the contents of r's tool messages, in order.
func toolResultsOf(r fakeopenai.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

func TestPersonaTools(t *testing.T) {
	var secret, other atomic.Int32
	a, _, fake := fakeAgent(t, nil, echoTool(), countedTool("secret", &secret), countedTool("other", &other))
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{
			{Name: "secret", Arguments: `{"text":"x"}`},
			{Name: "nosuch", Arguments: `{"text":"x"}`},
			{Name: "other", Arguments: `{"text":"x"}`},
		}},
		fakeopenai.Turn{Text: "done"},
		fakeopenai.Turn{Text: "plain"},
	)
	persona := &Persona{Name: "ada", Allow: noSecret}
	if _, err := collect(a, context.Background(), Input{ThreadID: "th_p", Text: "go", Persona: persona}); err != nil {
		t.Fatal(err)
	}
	if _, err := collect(a, context.Background(), Input{ThreadID: "th_n", Text: "go"}); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if diff := cmp.Diff([]string{"echo", "other"}, reqs[0].ToolNames()); diff != "" {
		t.Errorf("persona run offered (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"echo", "other", "secret"}, reqs[2].ToolNames()); diff != "" {
		t.Errorf("run without a persona offered (-want +got):\n%s", diff)
	}
	res := toolResultsOf(reqs[1])
	if len(res) != 3 {
		t.Fatalf("tool results %q, want 3", res)
	}
	unknown := res[1]
	if !strings.Contains(unknown, `unknown tool "nosuch"`) {
		t.Fatalf("unknown tool's result %q", unknown)
	}
	if want := strings.ReplaceAll(unknown, "nosuch", "secret"); res[0] != want {
		t.Errorf("refused tool's result\n%q\nwant the unknown tool's\n%q", res[0], want)
	}
	if res[2] != "other ran" {
		t.Errorf("allowed tool's result %q", res[2])
	}
	if secret.Load() != 0 || other.Load() != 1 {
		t.Errorf("secret ran %d times, other %d; want 0 and 1", secret.Load(), other.Load())
	}
}

func TestPersonaToolsWithSkill(t *testing.T) {
	var secret, other atomic.Int32
	a, _, fake := fakeAgent(t, func(o *Options) {
		o.AllowedTools = func(in *Input) []string {
			if in.Skill == "" {
				return nil
			}
			return []string{"echo", "secret"}
		}
	}, echoTool(), countedTool("secret", &secret), countedTool("other", &other))
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{
			{Name: "secret", Arguments: `{"text":"x"}`},
			{Name: "other", Arguments: `{"text":"x"}`},
		}},
		fakeopenai.Turn{Text: "done"},
	)
	in := Input{ThreadID: "th_s", Text: "go", Skill: "report", Persona: &Persona{Allow: noSecret}}
	if _, err := collect(a, context.Background(), in); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if diff := cmp.Diff([]string{"echo"}, reqs[0].ToolNames()); diff != "" {
		t.Errorf("offered (-want +got):\n%s", diff)
	}
	res := toolResultsOf(reqs[1])
	if !strings.Contains(res[0], `unknown tool "secret"; available tools: echo, other.`) {
		t.Errorf("refused tool's result %q, want the unknown-tool error", res[0])
	}
	if want := "tool other is not available while the report skill is active; it allows only echo."; !strings.Contains(res[1], want) {
		t.Errorf("skill-refused tool's result %q, want it to contain %q", res[1], want)
	}
	if secret.Load()+other.Load() != 0 {
		t.Errorf("refused tools ran: secret %d, other %d", secret.Load(), other.Load())
	}
}

func TestPersonaEnvAllow(t *testing.T) {
	type seen struct{ set, echo, secret bool }
	var got []seen
	probe := tools.Func("probe", "Reports its Env.", func(ctx context.Context, _ struct{}) (string, error) {
		allow := tools.EnvFrom(ctx).Allow
		s := seen{set: allow != nil}
		if allow != nil {
			s.echo, s.secret = allow("echo"), allow("secret")
		}
		got = append(got, s)
		return "ok", nil
	})
	a, _, fake := fakeAgent(t, nil, probe)
	for _, p := range []*Persona{nil, {Name: "ada", Allow: noSecret}, {Name: "bob"}} {
		fake.Script(fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "probe", Arguments: `{}`}}}, fakeopenai.Turn{Text: "done"})
		if _, err := collect(a, context.Background(), Input{ThreadID: "th_e", Text: "go", Persona: p}); err != nil {
			t.Fatal(err)
		}
	}
	want := []seen{{}, {set: true, echo: true}, {}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(seen{})); diff != "" {
		t.Errorf("Env.Allow (-want +got):\n%s", diff)
	}
}

func TestPersonaModel(t *testing.T) {
	tests := []struct {
		name    string
		persona *Persona
		thread  string // the thread's /models choice
		input   string // Input.Model
		want    string // the model id the server is asked for
	}{
		{"no persona", nil, "", "", "default-model"},
		{"no persona, thread's choice", nil, "small", "", "small-model"},
		{"persona's model", &Persona{Model: "big"}, "", "", "big-model"},
		{"thread's choice over the persona's", &Persona{Model: "big"}, "small", "", "small-model"},
		{"input over both", &Persona{Model: "big"}, "small", "default", "default-model"},
		{"unknown persona model", &Persona{Model: "gone"}, "", "", "default-model"},
		{"persona without a model", &Persona{Name: "ada"}, "", "", "default-model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, st, fake := fakeAgent(t, func(o *Options) {
				client := o.Models[0].Model // it asks for the request's model id
				o.Models = nil
				for _, name := range []string{"default", "big", "small"} {
					o.Models = append(o.Models, ModelRef{Name: name, ID: name + "-model", Model: client})
				}
			})
			if tt.thread != "" {
				err := st.Update(func(tx *store.Tx) error {
					return tx.PutThread(&store.Thread{ID: "th_m", Model: tt.thread})
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			fake.Script(fakeopenai.Turn{Text: "hi"})
			in := Input{ThreadID: "th_m", Text: "go", Model: tt.input, Persona: tt.persona}
			if _, err := collect(a, context.Background(), in); err != nil {
				t.Fatal(err)
			}
			if got := fake.Requests()[0].Model; got != tt.want {
				t.Errorf("asked for model %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPersonaSoul(t *testing.T) {
	configured := func(p *Prompt) {
		p.SetSection(SectionSoul, Static(SoulText("I am the configured soul.")))
	}
	tests := []struct {
		name    string
		setup   func(*Prompt)
		persona *Persona
		want    string
		notWant string
	}{
		{"configured soul", configured, nil, "<soul>\nI am the configured soul.\n</soul>", ""},
		{"persona's soul replaces it", configured, &Persona{Soul: "  I am Ada.\n"}, "<soul>\nI am Ada.\n</soul>", "configured soul"},
		{"persona without a soul keeps it", configured, &Persona{Name: "ada"}, "I am the configured soul.", ""},
		{"persona's soul with none configured", nil, &Persona{Soul: "I am Ada."}, "<soul>\nI am Ada.\n</soul>", ""},
		{"none", nil, nil, "", "<soul>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPrompt("Test")
			if tt.setup != nil {
				tt.setup(p)
			}
			a, _, fake := fakeAgent(t, func(o *Options) { o.Prompt = p })
			fake.Script(fakeopenai.Turn{Text: "one"}, fakeopenai.Turn{Text: "two"})
			for _, th := range []string{"th_1", "th_2"} {
				if _, err := collect(a, context.Background(), Input{ThreadID: th, Text: "go", Persona: tt.persona}); err != nil {
					t.Fatal(err)
				}
			}
			reqs := fake.Requests()
			system := reqs[0].Messages[0]
			if system.Role != "system" {
				t.Fatalf("first message is %s", system.Role)
			}
			if !strings.Contains(system.Content, tt.want) {
				t.Errorf("system prompt lacks %q:\n%s", tt.want, system.Content)
			}
			if tt.notWant != "" && strings.Contains(system.Content, tt.notWant) {
				t.Errorf("system prompt has %q:\n%s", tt.notWant, system.Content)
			}
			// Cacheable: the same persona gives the same prompt (up to the date).
			stable := func(s string) string { return s[:strings.Index(s, "<current_date>")] }
			if stable(reqs[1].Messages[0].Content) != stable(system.Content) {
				t.Errorf("two runs of one persona got different prompts")
			}
		})
	}
}
