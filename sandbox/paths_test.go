package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	m := newManager(t, Options{
		SkillsDir: t.TempDir(),
		Mounts:    []Mount{{HostPath: t.TempDir(), Path: "/mnt/data", ReadOnly: true}, {HostPath: t.TempDir(), Path: "/opt/shared/"}},
	})
	th, err := m.thread("t1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, virtual, rel, area string
		readOnly               bool
		wantErr                string
	}{
		{in: "notes.md", virtual: "/mnt/user-data/workspace/notes.md", rel: "workspace/notes.md", area: UserData},
		{in: "./a//b/", virtual: "/mnt/user-data/workspace/a/b", rel: "workspace/a/b", area: UserData},
		{in: " /mnt/user-data/outputs/r.pdf ", virtual: "/mnt/user-data/outputs/r.pdf", rel: "outputs/r.pdf", area: UserData},
		{in: "/mnt/user-data", virtual: "/mnt/user-data", rel: ".", area: UserData},
		{in: "/mnt/skills/pdf/SKILL.md", virtual: "/mnt/skills/pdf/SKILL.md", rel: "pdf/SKILL.md", area: Skills, readOnly: true},
		{in: "/mnt/data/x.csv", virtual: "/mnt/data/x.csv", rel: "x.csv", area: "/mnt/data", readOnly: true},
		{in: "/opt/shared", virtual: "/opt/shared", rel: ".", area: "/opt/shared"},
		{in: "", wantErr: "empty"},
		{in: "a\x00b", wantErr: "NUL"},
		{in: strings.Repeat("a/", 3000), wantErr: "too long"},
		{in: "../x", wantErr: "'..'"},
		{in: "/mnt/user-data/workspace/../../../etc/passwd", wantErr: "'..'"},
		{in: "/etc/passwd", wantErr: "outside the sandbox"},
		{in: "/mnt/user-datax/a", wantErr: "outside the sandbox"},
		{in: "/mnt", wantErr: "outside the sandbox"},
		{in: m.dataDir, wantErr: "outside the sandbox"},
	}
	for _, tt := range tests {
		l, err := th.resolve(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("resolve(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			if err != nil {
				noHostPath(t, err.Error(), m.dataDir)
			}
			continue
		}
		if err != nil {
			t.Errorf("resolve(%q): %v", tt.in, err)
			continue
		}
		if l.path != tt.virtual || l.rel != tt.rel || l.virtual != tt.area || l.readOnly != tt.readOnly {
			t.Errorf("resolve(%q) = %+v", tt.in, l)
		}
	}
}

func TestNewRejectsBadMounts(t *testing.T) {
	for _, mt := range []Mount{
		{HostPath: "/srv", Path: "data"},
		{HostPath: "/srv", Path: "/"},
		{HostPath: "/srv", Path: "/mnt/user-data/x"},
		{HostPath: "/srv", Path: "/mnt"},
		{HostPath: "", Path: "/mnt/data"},
		{HostPath: "/srv", Path: "/usr/local/data"},
		{HostPath: "/srv", Path: "/etc"},
	} {
		if _, err := New(Options{DataDir: t.TempDir(), Mounts: []Mount{mt}}); err == nil {
			t.Errorf("New accepted mount %+v", mt)
		}
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New accepted an empty data dir")
	}
}

func TestBadThreadID(t *testing.T) {
	m := newManager(t, Options{})
	for _, id := range []string{"", "../x", "a/b", strings.Repeat("a", 65), "a b", "x\x00"} {
		if _, err := call(t, m, id, "ls", map[string]string{}); err == nil || !strings.Contains(err.Error(), "thread id") {
			t.Errorf("thread %q: err = %v", id, err)
		}
	}
	if _, err := os.Stat(filepath.Join(m.dataDir, "x")); err == nil {
		t.Error("a bad thread id created a directory")
	}
}

func TestHide(t *testing.T) {
	m := newManager(t, Options{SkillsDir: "/srv/skills"})
	th, err := m.thread("t1")
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(th.userData, "workspace")
	tests := []struct{ in, want string }{
		{ws + "/a.txt", "/mnt/user-data/workspace/a.txt"},
		{"cd " + ws + "; ls", "cd /mnt/user-data/workspace; ls"},
		{th.userData, "/mnt/user-data"},
		{"/srv/skills/pdf and /srv/skillset", "/mnt/skills/pdf and /srv/skillset"},
		{m.dataDir + "/threads/other", "[host data dir]/threads/other"},
		{"nothing here", "nothing here"},
	}
	for _, tt := range tests {
		if got := th.hide(tt.in); got != tt.want {
			t.Errorf("hide(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestEscapes tries every way out of the thread's directories against every
// file tool: none may succeed, read or change anything outside, or name a
// host path.
func TestEscapes(t *testing.T) {
	m := newManager(t, Options{SkillsDir: t.TempDir()})
	outside := t.TempDir()
	writeHost(t, filepath.Join(outside, "secret.txt"), "TOPSECRET")
	writeHost(t, filepath.Join(hostDir(t, m, "other", "workspace"), "secret-b.txt"), "BSECRET")
	ws := hostDir(t, m, "a", "workspace")
	up, err := filepath.Rel(ws, outside)
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"rootlink": "/", "outlink": outside, "uplink": up, "vlink": "/mnt/user-data/outputs",
	} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A link made inside the sandbox, as the model would make it.
	if m.runner().mode == bashBwrap {
		mustCall(t, m, "a", "bash", map[string]string{"command": "ln -s / /mnt/user-data/workspace/bashlink"})
	} else {
		t.Log("bubblewrap unavailable: creating bashlink on the host instead")
		if err := os.Symlink("/", filepath.Join(ws, "bashlink")); err != nil {
			t.Fatal(err)
		}
	}
	// A link in outputs to a workspace file: fine for file tools, but not
	// deliverable.
	writeHost(t, filepath.Join(ws, "ok.txt"), "fine")
	if err := os.Symlink("../workspace/ok.txt", filepath.Join(hostDir(t, m, "a", "outputs"), "ok-link.txt")); err != nil {
		t.Fatal(err)
	}
	passwd, _ := os.ReadFile("/etc/passwd")

	paths := []string{
		"../secret.txt",
		"../../etc/passwd",
		"../../../../../../../../etc/passwd",
		"/etc/passwd",
		"/mnt/user-data/../../etc/passwd",
		"/mnt/user-data/workspace/../../../other/user-data/workspace/secret-b.txt",
		filepath.Join(outside, "secret.txt"),
		m.dataDir,
		filepath.Join(m.dataDir, "threads", "other", "user-data", "workspace", "secret-b.txt"),
		ws + "/ok.txt",
		"rootlink/etc/passwd",
		"/mnt/user-data/workspace/rootlink",
		"outlink/secret.txt",
		"outlink",
		"uplink/secret.txt",
		"vlink/x.txt",
		"bashlink/etc/passwd",
		"/mnt/user-data/workspace/bashlink/etc/passwd",
		"/mnt/user-data/workspace/" + strings.Repeat("x", 5000),
		"/mnt/user-data/workspace/" + strings.Repeat("y", 300) + "/z",
		"/mnt/user-data/workspace/a\x00/../../etc/passwd",
		"/mnt/skills/../user-data/workspace/ok.txt",
		"~/.ssh/id_rsa",
		"/root",
		"/proc/self/environ",
	}
	type use struct {
		tool string
		args func(p string) any
	}
	uses := []use{
		{"read_file", func(p string) any { return map[string]any{"path": p} }},
		{"write_file", func(p string) any { return map[string]any{"path": p, "content": "pwned"} }},
		{"write_file", func(p string) any { return map[string]any{"path": p + "/new.txt", "content": "pwned"} }},
		{"write_file", func(p string) any { return map[string]any{"path": p, "content": "pwned", "append": true} }},
		{"str_replace", func(p string) any {
			return map[string]any{"path": p, "old_str": "SECRET", "new_str": "x", "replace_all": true}
		}},
		{"ls", func(p string) any { return map[string]any{"path": p} }},
		{"glob", func(p string) any { return map[string]any{"pattern": "**", "path": p} }},
		{"grep", func(p string) any { return map[string]any{"pattern": "SECRET|root:", "path": p} }},
		{"present_files", func(p string) any { return map[string]any{"filepaths": []string{p}} }},
	}
	hosts := []string{m.dataDir, realPath(m.dataDir), outside, realPath(outside), m.skillsDir}
	for _, u := range uses {
		for _, p := range paths {
			out, err := call(t, m, "a", u.tool, u.args(p))
			if err == nil {
				// Only "~/.ssh/id_rsa" is a legal (relative) name; it must
				// stay inside the workspace.
				if p == "~/.ssh/id_rsa" && u.tool != "present_files" {
					continue
				}
				t.Errorf("%s %q succeeded: %q", u.tool, p, out)
				continue
			}
			msg := err.Error()
			if len(msg) < 10 {
				t.Errorf("%s %q: unclear error %q", u.tool, p, msg)
			}
			noHostPath(t, msg, hosts...)
			for _, s := range []string{"TOPSECRET", "BSECRET", "root:x:0"} {
				if strings.Contains(out+msg, s) {
					t.Errorf("%s %q leaked %s", u.tool, p, s)
				}
			}
		}
	}
	if _, err := call(t, m, "a", "present_files", map[string]any{"filepaths": []string{"/mnt/user-data/outputs/ok-link.txt"}}); err == nil {
		t.Error("present_files followed a link out of outputs")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "TOPSECRET" {
		t.Errorf("outside file changed: %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("files appeared outside: %v", entries)
	}
	if b, _ := os.ReadFile("/etc/passwd"); string(b) != string(passwd) {
		t.Error("/etc/passwd changed")
	}
	if b, _ := os.ReadFile(filepath.Join(hostDir(t, m, "other", "workspace"), "secret-b.txt")); string(b) != "BSECRET" {
		t.Errorf("the other thread's file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "~", ".ssh", "id_rsa")); err != nil {
		t.Errorf("~/.ssh/id_rsa should have been a workspace file: %v", err)
	}
}
