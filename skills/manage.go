package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if err := os.MkdirAll(m.opts.CustomDir, 0o755); err != nil {
		return "", errors.New("the custom skills directory cannot be created")
	}
	root, err := os.OpenRoot(m.opts.CustomDir)
	if err != nil {
		return "", errors.New("the custom skills directory cannot be opened")
	}
	defer root.Close()
	_, statErr := root.Lstat(name)
	e := edit{m: m, root: root, name: name, exists: statErr == nil, in: in}

	var msg string
	switch in.Action {
	case "create":
		msg, err = e.create(ctx)
	case "patch":
		msg, err = e.patch(ctx)
	case "write_file":
		msg, err = e.writeFile(ctx)
	case "delete_file":
		msg, err = e.deleteFile()
	case "delete":
		msg, err = e.delete()
	default:
		return "", &tools.ArgError{Tool: ManageTool, Msg: "action must be create, patch, write_file, delete_file or delete"}
	}
	if err != nil {
		return "", err
	}
	m.Reload()
	m.log.Info("skill changed by the agent", "skill", name, "action", in.Action, "path", in.Path)
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

func (e *edit) create(ctx context.Context) (string, error) {
	if e.exists {
		return "", fmt.Errorf("a custom skill %q already exists; change it with patch or write_file", e.name)
	}
	msg, err := e.m.write(ctx, e.root, e.name, "SKILL.md", e.in.Content)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Created skill %s at %s/%s/SKILL.md.%s", e.name, CustomRoot, e.name, msg), nil
}

func (e *edit) patch(ctx context.Context) (string, error) {
	file, err := skillFile(e.in.Path, "SKILL.md")
	if err != nil {
		return "", err
	}
	if !e.exists {
		return "", e.m.missing(e.name)
	}
	old, err := e.root.ReadFile(path.Join(e.name, file))
	if err != nil {
		return "", fmt.Errorf("skill %s has no file %s", e.name, file)
	}
	if e.in.Old == "" {
		return "", &tools.ArgError{Tool: ManageTool, Msg: "patch needs old, the exact text to replace"}
	}
	if n := strings.Count(string(old), e.in.Old); n != 1 {
		return "", fmt.Errorf("old occurs %d times in %s; it must occur exactly once (include more of the surrounding text)", n, file)
	}
	msg, err := e.m.write(ctx, e.root, e.name, file, strings.Replace(string(old), e.in.Old, e.in.New, 1))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Patched %s/%s/%s.%s", CustomRoot, e.name, file, msg), nil
}

func (e *edit) writeFile(ctx context.Context) (string, error) {
	file, err := skillFile(e.in.Path, "")
	if err != nil {
		return "", err
	}
	if !e.exists {
		return "", e.m.missing(e.name)
	}
	msg, err := e.m.write(ctx, e.root, e.name, file, e.in.Content)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Wrote %s/%s/%s.%s", CustomRoot, e.name, file, msg), nil
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

// write checks and saves one file of a skill: SKILL.md must parse, every
// file is scanned (a block refuses the write with the reason, a warning is
// returned to be shown). The write goes through root, so links cannot
// lead it out of the skills directory.
func (m *Manager) write(ctx context.Context, root *os.Root, name, file, content string) (string, error) {
	if file == "SKILL.md" {
		if _, err := Parse([]byte(content), name); err != nil {
			return "", fmt.Errorf("the SKILL.md is not valid: %v", err)
		}
	} else if len(content) > maxSupportFile {
		return "", fmt.Errorf("%s is larger than %d KB", file, maxSupportFile>>10)
	}
	target := path.Join(name, file)
	fi, statErr := root.Lstat(target)
	if statErr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("%s is a link; refusing to write through it", file)
	}
	v := m.Scan(ctx, name, file, content, executable(file, content, statErr == nil && fi.Mode()&0o111 != 0))
	switch v.Decision {
	case Block:
		m.log.Warn("a skill change was blocked", "skill", name, "file", file, "reason", v.Reason)
		return "", fmt.Errorf("refused by the safety check: %s", v.Reason)
	case Warn:
		m.log.Warn("a skill change was saved with a warning", "skill", name, "file", file, "reason", v.Reason)
	}
	if err := root.MkdirAll(path.Dir(target), 0o755); err != nil {
		return "", fmt.Errorf("%s could not be created", path.Dir(file))
	}
	if fi, err := root.Lstat(target); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("%s is a link; refusing to write through it", file)
	}
	if err := root.WriteFile(target, []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("%s could not be written", file)
	}
	if v.Decision == Warn {
		return " Saved with a warning from the safety review: " + v.Reason, nil
	}
	return "", nil
}
