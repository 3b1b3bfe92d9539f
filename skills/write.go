package skills

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// plan is one file write of skill_manage, decided under writeMu and
// applied under it again after the safety review, which runs without it
// (a model call may take a minute; other edits need not wait for it).
type plan struct {
	file, content string
	done          string // what to tell the model once it is written
	exec          bool   // the file will run (see executable)
	// The skill and its file as they were when the write was planned: it
	// is applied only if they are still so.
	exists, had bool
	before      []byte
}

// change creates or changes one file of a skill: planned under writeMu,
// reviewed without it, applied under it if nothing changed meanwhile.
// Every file is scanned: a block refuses the write with the reason, a
// warning is returned to be shown.
func (m *Manager) change(ctx context.Context, name string, in manageArgs) (string, error) {
	p, err := m.plan(name, in)
	if err != nil {
		return "", err
	}
	v := m.Scan(ctx, name, p.file, p.content, p.exec)
	switch v.Decision {
	case Block:
		m.log.Warn("a skill change was blocked", "skill", name, "file", p.file, "reason", v.Reason)
		return "", fmt.Errorf("refused by the safety check: %s", v.Reason)
	}
	if err := m.apply(name, p); err != nil {
		return "", err
	}
	if v.Decision == Warn {
		m.log.Warn("a skill change was saved with a warning", "skill", name, "file", p.file, "reason", v.Reason)
		return p.done + " Saved with a warning from the safety review: " + v.Reason, nil
	}
	return p.done, nil
}

// plan decides the write under writeMu: which file, what content, and
// the state it applies to.
func (m *Manager) plan(name string, in manageArgs) (*plan, error) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	root, err := m.openCustom()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	_, statErr := root.Lstat(name)
	e := edit{m: m, root: root, name: name, exists: statErr == nil, in: in}
	var p *plan
	switch in.Action {
	case "create":
		p, err = e.create()
	case "patch":
		p, err = e.patch()
	default:
		p, err = e.writeFile()
	}
	if err != nil {
		return nil, err
	}
	return p, check(root, name, p, e.exists)
}

// check validates p's content (SKILL.md must parse, other files are
// bounded), refuses to write through a link, and records the state p
// applies to. The write goes through root, so links cannot lead it out of
// the skills directory.
func check(root *os.Root, name string, p *plan, exists bool) error {
	if p.file == "SKILL.md" {
		if _, err := Parse([]byte(p.content), name); err != nil {
			return fmt.Errorf("the SKILL.md is not valid: %v", err)
		}
	} else if len(p.content) > maxSupportFile {
		return fmt.Errorf("%s is larger than %d KB", p.file, maxSupportFile>>10)
	}
	fi, statErr := root.Lstat(path.Join(name, p.file))
	if statErr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a link; refusing to write through it", p.file)
	}
	p.exec = executable(p.file, p.content, statErr == nil && fi.Mode()&0o111 != 0)
	p.exists = exists
	p.before, p.had = current(root, name, p.file)
	return nil
}

// current is a skill's file as it is now; had reports that it exists.
func current(root *os.Root, name, file string) (b []byte, had bool) {
	b, err := root.ReadFile(path.Join(name, file))
	return b, err == nil
}

// apply writes p under writeMu, unless the skill or the file changed
// since p was planned, and reloads the skills.
func (m *Manager) apply(name string, p *plan) error {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	root, err := m.openCustom()
	if err != nil {
		return err
	}
	defer root.Close()
	_, statErr := root.Lstat(name)
	now, had := current(root, name, p.file)
	if (statErr == nil) != p.exists || had != p.had || !bytes.Equal(now, p.before) {
		return fmt.Errorf("skill %s changed while this change was being reviewed; read it again and retry", name)
	}
	target := path.Join(name, p.file)
	if err := root.MkdirAll(path.Dir(target), 0o755); err != nil {
		return fmt.Errorf("%s could not be created", path.Dir(p.file))
	}
	if fi, err := root.Lstat(target); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a link; refusing to write through it", p.file)
	}
	if err := root.WriteFile(target, []byte(p.content), 0o644); err != nil {
		return fmt.Errorf("%s could not be written", p.file)
	}
	m.Reload()
	return nil
}
