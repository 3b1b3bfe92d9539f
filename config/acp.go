package config

// ACP configures external coding agents that the lead reaches over the
// Agent Client Protocol with the invoke_acp_agent tool. The tool is
// offered only when Agents is not empty.
type ACP struct {
	Agents []ACPAgent `yaml:"agents"`
}

// ACPAgent is one external agent: a program speaking ACP on its stdin and
// stdout, started in the conversation's sandbox for each invocation.
type ACPAgent struct {
	Name        string            `yaml:"name"`        // [a-z0-9-], unique; what the model asks for
	Description string            `yaml:"description"` // shown to the model
	Command     string            `yaml:"command"`
	Args        []string          `yaml:"args"`
	Env         map[string]string `yaml:"env"` // handed over in the environment, never logged
	// TimeoutSeconds bounds one invocation; 0 means DefaultACPTimeout.
	TimeoutSeconds int `yaml:"timeout_seconds"`
	// Permissions answers the agent's permission requests: "ask" (the
	// default, also "") asks the person in the chat, with the request's
	// options as buttons (no one to ask, or no answer in 10 minutes:
	// rejected); "deny" rejects them, "allow" accepts them.
	Permissions string `yaml:"permissions"`
}

// DefaultACPTimeout is an invocation's limit in seconds when
// timeout_seconds is 0, as in DeerFlow.
const DefaultACPTimeout = 1800

func (v *validator) acp() {
	seen := map[string]bool{}
	for i, a := range v.c.ACP.Agents {
		k := index("acp.agents", i)
		switch {
		case a.Name == "":
			v.fail(k+".name", "required")
		case seen[a.Name]:
			v.fail(k+".name", "duplicate agent name %q", a.Name)
		case !isACPName(a.Name):
			v.fail(k+".name", "must be lowercase letters, digits or - (at most 32)")
		}
		seen[a.Name] = true
		v.required(k+".command", a.Command)
		v.nonNegative(k+".timeout_seconds", a.TimeoutSeconds)
		if a.Permissions != "" {
			v.oneOf(k+".permissions", a.Permissions, "ask", "deny", "allow")
		}
	}
}

// isACPName reports whether s is 1 to 32 of [a-z0-9-].
func isACPName(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
