// Package skills loads SKILL.md capabilities: public ones built into the
// binary (shown at /mnt/skills/public), custom ones from skills.path (shown
// at /mnt/skills/custom). The prompt lists only each enabled skill's name,
// description and location; the agent reads SKILL.md when a request
// matches. "/<skill> task" activates one skill for one turn, with its body
// in the model's view and its allowed-tools enforced. /skills lists them
// and switches them on and off. With skill_evolution enabled the agent can
// write custom skills with skill_manage; every write is scanned first.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Where skills are shown in the sandbox.
const (
	PublicRoot = "/mnt/skills/public"
	CustomRoot = "/mnt/skills/custom"
)

// Skill is one loaded skill.
type Skill struct {
	Name         string
	Description  string
	License      string
	AllowedTools []string // empty: no restriction
	Custom       bool     // from skills.path; else built in
	Body         string   // SKILL.md after the front matter
}

// Location is the virtual path of the skill's SKILL.md.
func (s *Skill) Location() string {
	root := PublicRoot
	if s.Custom {
		root = CustomRoot
	}
	return root + "/" + s.Name + "/SKILL.md"
}

// Source says where the skill comes from, for people.
func (s *Skill) Source() string {
	if s.Custom {
		return "custom"
	}
	return "public"
}

// validName reports whether s is a skill name: a lowercase letter or
// digit, then up to 63 more or hyphens. (A loop rather than a regexp:
// compiling ^[a-z0-9][a-z0-9-]{0,63}$ cost every start 0.07 ms and 50 KB
// of heap.)
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Limits of the front matter.
const (
	maxDescription = 1024
	maxSkillFile   = 256 << 10
)

type frontMatter struct {
	Name         string    `yaml:"name"`
	Description  string    `yaml:"description"`
	License      string    `yaml:"license"`
	AllowedTools yaml.Node `yaml:"allowed-tools"`
}

// Parse reads a SKILL.md. dir is the name of the directory it is in, which
// the skill's name must equal.
func Parse(data []byte, dir string) (*Skill, error) {
	if len(data) > maxSkillFile {
		return nil, fmt.Errorf("SKILL.md is larger than %d KB", maxSkillFile>>10)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	if !strings.HasPrefix(text, "---\n") {
		return nil, errors.New("SKILL.md must start with YAML front matter between --- lines")
	}
	head, body, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return nil, errors.New("the front matter is not closed with a --- line")
	}
	if rest, ok := strings.CutPrefix(body, "\n"); ok {
		body = rest
	} else if body != "" {
		return nil, errors.New("the front matter is not closed with a --- line")
	}
	var fm frontMatter
	dec := yaml.NewDecoder(bytes.NewReader([]byte(head)))
	if err := dec.Decode(&fm); err != nil {
		return nil, fmt.Errorf("the front matter is not valid YAML: %v", yamlProblem(err))
	}
	fm.Name = strings.TrimSpace(fm.Name)
	desc := strings.Join(strings.Fields(fm.Description), " ")
	switch {
	case fm.Name == "":
		return nil, errors.New("the front matter has no name")
	case !validName(fm.Name):
		return nil, fmt.Errorf("name %q must be lowercase letters, digits and hyphens (at most 64)", fm.Name)
	case dir != "" && fm.Name != dir:
		return nil, fmt.Errorf("name %q does not match its directory %q", fm.Name, dir)
	case desc == "":
		return nil, errors.New("the front matter has no description")
	case len(desc) > maxDescription:
		return nil, fmt.Errorf("the description is longer than %d characters", maxDescription)
	}
	tools, err := toolList(&fm.AllowedTools)
	if err != nil {
		return nil, err
	}
	return &Skill{
		Name: fm.Name, Description: desc, License: strings.TrimSpace(fm.License),
		AllowedTools: tools, Body: strings.TrimSpace(body),
	}, nil
}

// toolList reads allowed-tools: a YAML list, or one string of names
// separated by commas or spaces.
func toolList(n *yaml.Node) ([]string, error) {
	var raw []string
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		raw = strings.FieldsFunc(n.Value, func(r rune) bool { return r == ',' || r == ' ' })
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, errors.New("allowed-tools must be a list of tool names")
			}
			raw = append(raw, c.Value)
		}
	default:
		return nil, errors.New("allowed-tools must be a list of tool names")
	}
	var out []string
	for _, t := range raw {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out, nil
}

func yamlProblem(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: ")
	return s
}
