package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// Options configures a Manager.
type Options struct {
	Store *store.Store // required
	// CustomDir is skills.path: the custom skills, one directory each.
	CustomDir string
	// Admins may switch skills on and off ("channel:user id"); empty
	// means everyone may.
	Admins []string
	// Evolution offers skill_manage. Model reviews its writes.
	Evolution bool
	Model     llm.Model
	ModelID   string
	Logger    *slog.Logger
	Now       func() time.Time
}

// Manager holds the loaded skills and their switches. It is safe for
// concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	writeMu sync.Mutex // serialises skill_manage's edits

	mu      sync.Mutex
	skills  []*Skill // by name
	states  map[string]store.SkillState
	section string // the prompt section; "" → rebuild
}

// New loads the built-in and custom skills and their switches. Invalid
// skills are logged and skipped.
func New(opts Options) (*Manager, error) {
	if opts.Store == nil {
		return nil, errors.New("skills: no store")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Manager{opts: opts, log: opts.Logger}
	err := opts.Store.View(func(tx *store.Tx) error {
		var err error
		m.states, err = tx.SkillStates()
		return err
	})
	if err != nil {
		return nil, err
	}
	m.Reload()
	return m, nil
}

// Reload reads the skills again (after skill_manage or an operator changed
// custom ones).
func (m *Manager) Reload() {
	all, problems := List(m.opts.CustomDir)
	for _, p := range problems {
		m.log.Warn("skipping an invalid skill", "file", p.File, "problem", p.Msg)
	}
	for _, s := range all {
		if s.Custom && isPublic(s.Name) {
			m.log.Warn("a custom skill replaces the built-in one of the same name", "skill", s.Name)
		}
	}
	m.mu.Lock()
	m.skills, m.section = all, ""
	m.mu.Unlock()
}

// isPublic reports whether a skill of that name is built in.
func isPublic(name string) bool {
	_, err := fs.Stat(Public(), name+"/SKILL.md")
	return err == nil
}

// All returns every loaded skill, by name.
func (m *Manager) All() []*Skill {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.skills)
}

func (m *Manager) enabledLocked(name string) bool {
	st, ok := m.states[name]
	return !ok || st.Enabled
}

// Lookup returns the enabled skill called name.
func (m *Manager) Lookup(name string) (*Skill, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.skills {
		if s.Name == name {
			return s, m.enabledLocked(name)
		}
	}
	return nil, false
}

// Has reports whether name is an enabled skill (for routing "/name task").
func (m *Manager) Has(name string) bool {
	_, ok := m.Lookup(name)
	return ok
}

// PromptSection is the system prompt's skills section: name, description
// and location of each enabled skill, nothing more; the agent reads a
// SKILL.md when it needs it. It changes only when skills do. A
// description is anyone's writing (a custom skill, one the agent made): it
// is escaped onto its line, so it cannot close the section or add a skill.
func (m *Manager) PromptSection() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.section == "" {
		m.section = m.sectionLocked(nil)
	}
	return m.section
}

// PromptSectionOf is PromptSection listing only the skills in allowed
// (all of them when it is empty): what an agent limited to some skills
// is told.
func (m *Manager) PromptSectionOf(allowed []string) string {
	if len(allowed) == 0 {
		return m.PromptSection()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sectionLocked(allowed)
}

// sectionLocked renders the skills section (of the skills in allowed, or
// all when it is nil); " " when there are none.
func (m *Manager) sectionLocked(allowed []string) string {
	var b strings.Builder
	for _, s := range m.skills {
		if m.enabledLocked(s.Name) && (allowed == nil || slices.Contains(allowed, s.Name)) {
			fmt.Fprintf(&b, "- %s: %s (%s)\n", s.Name, tools.EscapeLine(s.Description), s.Location())
		}
	}
	if b.Len() == 0 {
		return " " // none: a blank section
	}
	return "<skills>\nSkills are instructions and resources for particular kinds of work. When a request matches a skill's description, read its SKILL.md with read_file before you start, then follow it; its other files (references/, scripts/, templates/) are next to it. Read only the skills you need.\n\n" +
		b.String() + "</skills>"
}

// Activation is what a "/<skill> task" message adds to its turn: the
// skill's instructions for the model, and the only tools it may use (nil
// when the skill does not restrict them). The body is followed as
// instructions, but inside its section: its tags are escaped (code blocks
// are kept), so it cannot end the section or pass for a system message.
func (m *Manager) Activation(name string) (context string, allowed []string, ok bool) {
	s, ok := m.Lookup(name)
	if !ok {
		return "", nil, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<active_skill name=%q>\nThe person asked for this skill for this message: follow its instructions below. Its files are in %s.\n", s.Name, strings.TrimSuffix(s.Location(), "/SKILL.md"))
	if len(s.AllowedTools) > 0 {
		fmt.Fprintf(&b, "While it is active you can use only these tools: %s.\n", tools.EscapeLine(strings.Join(s.AllowedTools, ", ")))
	}
	b.WriteString("\n" + tools.EscapeTags(s.Body) + "\n</active_skill>")
	return b.String(), s.AllowedTools, true
}

// Command answers "/skills [args]" from userID: the list with switches,
// or "enable NAME" / "disable NAME".
func (m *Manager) Command(userID, args string) string {
	fields := strings.Fields(args)
	if len(fields) == 0 {
		return m.list()
	}
	verb := strings.ToLower(fields[0])
	if len(fields) != 2 || (verb != "enable" && verb != "disable") {
		return "Usage: /skills lists the skills · /skills enable NAME · /skills disable NAME"
	}
	if len(m.opts.Admins) > 0 && !slices.Contains(m.opts.Admins, userID) {
		return "Only the operators listed in skills.admins can switch skills on or off."
	}
	name := strings.ToLower(fields[1])
	m.mu.Lock()
	found := slices.ContainsFunc(m.skills, func(s *Skill) bool { return s.Name == name })
	m.mu.Unlock()
	if !found {
		return fmt.Sprintf("There is no skill called %q. /skills lists them.", name)
	}
	st := store.SkillState{Enabled: verb == "enable", By: userID, Updated: m.opts.Now()}
	if err := m.opts.Store.Update(func(tx *store.Tx) error { return tx.PutSkillState(name, &st) }); err != nil {
		m.log.Error("switching a skill", "skill", name, "err", err)
		return "I couldn't switch the skill; please try again."
	}
	m.mu.Lock()
	m.states[name], m.section = st, ""
	m.mu.Unlock()
	if st.Enabled {
		return fmt.Sprintf("Skill %s is on.", name)
	}
	return fmt.Sprintf("Skill %s is off: I won't use it until /skills enable %s.", name, name)
}

func (m *Manager) list() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.skills) == 0 {
		return "No skills are installed."
	}
	var b strings.Builder
	b.WriteString("Skills:\n")
	for _, s := range m.skills {
		mark := "✅"
		if !m.enabledLocked(s.Name) {
			mark = "⛔ (off)"
		}
		fmt.Fprintf(&b, "%s %s (%s): %s\n", mark, s.Name, s.Source(), tools.Clip(s.Description, 100))
	}
	b.WriteString("\n/<skill> <task> uses a skill for one message · /skills enable NAME · /skills disable NAME")
	return b.String()
}
