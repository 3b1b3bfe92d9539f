package skills

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// public holds the skills built into the binary.
//
//go:embed all:public
var public embed.FS

// Public returns the built-in skills' files, rooted at their directories.
func Public() fs.FS {
	sub, err := fs.Sub(public, "public")
	if err != nil {
		panic(err)
	}
	return sub
}

// Problem is a skill that could not be loaded.
type Problem struct {
	File string // the SKILL.md, as a virtual path
	Msg  string
}

func (p Problem) String() string { return p.File + ": " + p.Msg }

// load reads every <name>/SKILL.md in fsys. Directories without a SKILL.md
// are not skills and are passed over.
func load(fsys fs.FS, custom bool) ([]*Skill, []Problem) {
	root := PublicRoot
	if custom {
		root = CustomRoot
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []Problem{{File: root, Msg: err.Error()}}
	}
	var out []*Skill
	var problems []Problem
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		file := path.Join(e.Name(), "SKILL.md")
		data, err := fs.ReadFile(fsys, file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, Problem{File: root + "/" + file, Msg: err.Error()})
			continue
		}
		s, err := Parse(data, e.Name())
		if err != nil {
			problems = append(problems, Problem{File: root + "/" + file, Msg: err.Error()})
			continue
		}
		s.Custom = custom
		out = append(out, s)
	}
	return out, problems
}

// merge combines public and custom skills by name, custom over public.
func merge(pub, custom []*Skill) (all []*Skill) {
	byName := map[string]*Skill{}
	for _, s := range pub {
		byName[s.Name] = s
	}
	for _, s := range custom {
		byName[s.Name] = s
	}
	for _, s := range byName {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Extract writes the built-in skills to dir, so the sandbox can show them
// read-only: files that differ are rewritten, files that are no longer
// built in are removed.
func Extract(dir string) error {
	fsys := Public()
	want := map[string]bool{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		want[target] = true
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if cur, err := os.ReadFile(target); err == nil && bytes.Equal(cur, data) {
			return nil
		}
		tmp := target + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, target)
	})
	if err != nil {
		return err
	}
	var stale []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir && !want[p] {
			stale = append(stale, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	for _, p := range stale {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// List loads the built-in skills and those in customDir without a store
// (for `deerflow check`): every skill, by name, and the invalid ones.
func List(customDir string) ([]*Skill, []Problem) {
	pub, problems := load(Public(), false)
	var custom []*Skill
	if customDir != "" {
		var more []Problem
		custom, more = load(os.DirFS(customDir), true)
		problems = append(problems, more...)
	}
	return merge(pub, custom), problems
}
