package skills

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/deerflow/deerflow/tools"
)

// ManageTool is the name of the tool that edits custom skills.
const ManageTool = "skill_manage"

type manageArgs struct {
	Action  string `json:"action" enum:"create,patch,write_file,delete_file,delete" desc:"create a skill from a whole SKILL.md; patch replaces text in one of its files; write_file writes a supporting file; delete_file removes one; delete removes the whole skill."`
	Name    string `json:"name" desc:"The skill's name: lowercase letters, digits and hyphens; also its directory."`
	Content string `json:"content,omitempty" desc:"create: the whole SKILL.md, front matter included. write_file: the file's content."`
	Path    string `json:"path,omitempty" desc:"patch, write_file, delete_file: the file in the skill: SKILL.md, or a path under references/, scripts/ or templates/."`
	Old     string `json:"old,omitempty" desc:"patch: the exact text to replace; it must occur exactly once."`
	New     string `json:"new,omitempty" desc:"patch: the replacement."`
}

// maxSupportFile bounds one supporting file.
const maxSupportFile = 1 << 20

// Tool returns skill_manage, or nil when skill evolution is off.
func (m *Manager) Tool() tools.Tool {
	if !m.opts.Evolution || m.opts.CustomDir == "" {
		return nil
	}
	return tools.Func(ManageTool, "Create, improve or delete your own (custom) skills, kept in "+CustomRoot+
		". Built-in skills are read-only; a custom skill of the same name replaces one. Every change is checked for safety first and may be refused with the reason. Read /mnt/skills/public/skill-creator/SKILL.md before writing a skill.",
		m.manage)
}

func (m *Manager) manage(ctx context.Context, in manageArgs) (string, error) {
	name := strings.TrimSpace(in.Name)
	if !validName(name) {
		return "", &tools.ArgError{Tool: ManageTool, Msg: fmt.Sprintf("name %q must be lowercase letters, digits and hyphens (at most 64)", name)}
	}
	var msg string
	var err error
	switch in.Action {
	case "create", "patch", "write_file":
		msg, err = m.change(ctx, name, in)
	case "delete_file", "delete":
		msg, err = m.remove(name, in)
	default:
		return "", &tools.ArgError{Tool: ManageTool, Msg: "action must be create, patch, write_file, delete_file or delete"}
	}
	if err != nil {
		return "", err
	}
	m.log.Info("skill changed by the agent", "skill", name, "action", in.Action, "path", in.Path)
	return msg, nil
}

// openCustom opens the custom skills directory, making it if need be.
func (m *Manager) openCustom() (*os.Root, error) {
	if err := os.MkdirAll(m.opts.CustomDir, 0o755); err != nil {
		return nil, errors.New("the custom skills directory cannot be created")
	}
	root, err := os.OpenRoot(m.opts.CustomDir)
	if err != nil {
		return nil, errors.New("the custom skills directory cannot be opened")
	}
	return root, nil
}

// remove deletes a skill's file, or the whole skill, under writeMu.
func (m *Manager) remove(name string, in manageArgs) (string, error) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	root, err := m.openCustom()
	if err != nil {
		return "", err
	}
	defer root.Close()
	_, statErr := root.Lstat(name)
	e := edit{m: m, root: root, name: name, exists: statErr == nil, in: in}
	var msg string
	if in.Action == "delete" {
		msg, err = e.delete()
	} else {
		msg, err = e.deleteFile()
	}
	if err != nil {
		return "", err
	}
	m.Reload()
	return msg, nil
}

// edit is one skill_manage call on skill name, under Manager.writeMu.
type edit struct {
	m      *Manager
	root   *os.Root // the custom skills directory
	name   string
	exists bool
	in     manageArgs
}

func (e *edit) create() (*plan, error) {
	if e.exists {
		return nil, fmt.Errorf("a custom skill %q already exists; change it with patch or write_file", e.name)
	}
	return &plan{file: "SKILL.md", content: e.in.Content,
		done: fmt.Sprintf("Created skill %s at %s/%s/SKILL.md.", e.name, CustomRoot, e.name)}, nil
}

func (e *edit) patch() (*plan, error) {
	file, err := skillFile(e.in.Path, "SKILL.md")
	if err != nil {
		return nil, err
	}
	if !e.exists {
		return nil, e.m.missing(e.name)
	}
	old, err := e.root.ReadFile(path.Join(e.name, file))
	if err != nil {
		return nil, fmt.Errorf("skill %s has no file %s", e.name, file)
	}
	if e.in.Old == "" {
		return nil, &tools.ArgError{Tool: ManageTool, Msg: "patch needs old, the exact text to replace"}
	}
	if n := strings.Count(string(old), e.in.Old); n != 1 {
		return nil, fmt.Errorf("old occurs %d times in %s; it must occur exactly once (include more of the surrounding text)", n, file)
	}
	return &plan{file: file, content: strings.Replace(string(old), e.in.Old, e.in.New, 1),
		done: fmt.Sprintf("Patched %s/%s/%s.", CustomRoot, e.name, file)}, nil
}

func (e *edit) writeFile() (*plan, error) {
	file, err := skillFile(e.in.Path, "")
	if err != nil {
		return nil, err
	}
	if !e.exists {
		return nil, e.m.missing(e.name)
	}
	return &plan{file: file, content: e.in.Content,
		done: fmt.Sprintf("Wrote %s/%s/%s.", CustomRoot, e.name, file)}, nil
}

func (e *edit) deleteFile() (string, error) {
	file, err := skillFile(e.in.Path, "")
	if err != nil {
		return "", err
	}
	if file == "SKILL.md" {
		return "", errors.New("SKILL.md is the skill itself; use delete to remove the whole skill")
	}
	if err := e.root.Remove(path.Join(e.name, file)); err != nil {
		return "", fmt.Errorf("skill %s has no file %s", e.name, file)
	}
	return fmt.Sprintf("Deleted %s/%s/%s.", CustomRoot, e.name, file), nil
}

func (e *edit) delete() (string, error) {
	if !e.exists {
		return "", e.m.missing(e.name)
	}
	if err := e.root.RemoveAll(e.name); err != nil {
		return "", fmt.Errorf("skill %s could not be deleted", e.name)
	}
	return fmt.Sprintf("Deleted skill %s.", e.name), nil
}

func (m *Manager) missing(name string) error {
	if s, ok := m.Lookup(name); ok && !s.Custom {
		return fmt.Errorf("%s is a built-in skill and read-only; create a custom skill of the same name to replace it", name)
	}
	return fmt.Errorf("there is no custom skill %q; create it first", name)
}

// skillFile checks a path inside a skill: SKILL.md or under references/,
// scripts/ or templates/, relative, without "..", hidden parts or odd
// characters. def is used when p is empty (or "" to require one).
func skillFile(p, def string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		p = def
	}
	bad := func(why string) error {
		return &tools.ArgError{Tool: ManageTool, Msg: fmt.Sprintf("path %q %s", p, why)}
	}
	switch {
	case p == "":
		return "", bad("is required")
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsAny(p, "\x00\n"):
		return "", bad("must be relative to the skill, like scripts/run.py")
	}
	clean := path.Clean(p)
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." || strings.HasPrefix(part, ".") {
			return "", bad("must not contain . or .. or hidden names")
		}
	}
	if clean == "SKILL.md" {
		return clean, nil
	}
	dir, _, _ := strings.Cut(clean, "/")
	if (dir != "references" && dir != "scripts" && dir != "templates") || clean == dir {
		return "", bad("must be SKILL.md or a file under references/, scripts/ or templates/")
	}
	if strings.Count(clean, "/") > 4 {
		return "", bad("is too deep")
	}
	return clean, nil
}
