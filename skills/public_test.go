package skills

import (
	"io/fs"
	"strings"
	"testing"
)

// TestPublicScriptsPassTheStaticRules holds the built-in skills' scripts to
// the rules for files that run, so that a copy saved as a custom skill (or
// changed with skill_manage) is not refused for code we ship. (Instructions
// are left out: skill-creator quotes what a skill must not say.)
func TestPublicScriptsPassTheStaticRules(t *testing.T) {
	fsys := Public()
	n := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		_, rel, _ := strings.Cut(p, "/") // as skill_manage sees it: inside the skill
		if !executable(rel, string(data), false) {
			return nil
		}
		n++
		if v, hit := scanStatic(rel, string(data), true); hit {
			t.Errorf("%s: %s", p, v.Reason)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 9 {
		t.Errorf("only %d scripts in the built-in skills", n)
	}
}
