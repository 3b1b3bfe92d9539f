package bwrap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree builds files under root (path → content; content "-> x"
// makes a symlink to x, a path ending in "/" an empty directory).
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(p, "/"):
			err = os.MkdirAll(full, 0o755)
		case strings.HasPrefix(content, "->"):
			err = os.Symlink(strings.TrimSpace(content[2:]), full)
		default:
			err = os.WriteFile(full, []byte(content), 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// nvmNode is a node installed by nvm: a bin beside a lib.
var nvmNode = map[string]string{
	".nvm/versions/node/v20.1.0/bin/node":          "#!/bin/sh\n",
	".nvm/versions/node/v20.1.0/lib/node_modules/": "",
}

func mergeFiles(m map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

const nvmBinDir = "$H/.nvm/versions/node/v20.1.0/bin"

// programCases are the layouts ProgramDirs must handle; $H is the home.
var programCases = []struct {
	name     string
	files    map[string]string
	command  string
	args     []string
	path     string // $H is the home
	wantPath string
	readOnly []string
	pathDirs []string
	err      string
}{{
	name:     "a Go binary in ~/bin",
	files:    map[string]string{"bin/mcp-go": "\x7fELF", "bin/other": "x"},
	command:  "mcp-go",
	path:     "$H/bin:/usr/bin",
	wantPath: "$H/bin/mcp-go",
	readOnly: []string{"$H/bin"},
	pathDirs: []string{"$H/bin"},
}, {
	name: "a node_modules/.bin link run by an nvm node through env",
	files: mergeFiles(nvmNode, map[string]string{
		"proj/node_modules/srv/dist/index.js": "#!/usr/bin/env node\nconsole.log(1)\n",
		"proj/node_modules/.bin/srv":          "-> ../srv/dist/index.js",
	}),
	command:  "srv",
	path:     "$H/proj/node_modules/.bin:" + nvmBinDir + ":/usr/bin",
	wantPath: "$H/proj/node_modules/.bin/srv",
	readOnly: []string{"$H/.nvm/versions/node/v20.1.0", "$H/proj"},
	pathDirs: []string{"$H/proj/node_modules/.bin", nvmBinDir},
}, {
	name: "env -S with flags",
	files: mergeFiles(nvmNode, map[string]string{
		"proj/server.mjs": "#!/usr/bin/env -S node --experimental-vm-modules\n",
	}),
	command:  "$H/proj/server.mjs",
	path:     nvmBinDir + ":/usr/bin",
	wantPath: "$H/proj/server.mjs",
	readOnly: []string{"$H/.nvm/versions/node/v20.1.0", "$H/proj"},
	pathDirs: []string{"$H/proj", nvmBinDir},
}, {
	name: "a virtualenv script whose python links to a pyenv install",
	files: map[string]string{
		".pyenv/versions/3.12.1/bin/python3.12":  "\x7fELF",
		".pyenv/versions/3.12.1/lib/python3.12/": "",
		"proj/.venv/bin/python":                  "-> $H/.pyenv/versions/3.12.1/bin/python3.12",
		"proj/.venv/bin/mcp-srv":                 "#!$H/proj/.venv/bin/python\n",
		"proj/.venv/lib/site-packages/":          "",
	},
	command:  "$H/proj/.venv/bin/mcp-srv",
	path:     "/usr/bin",
	wantPath: "$H/proj/.venv/bin/mcp-srv",
	readOnly: []string{"$H/.pyenv/versions/3.12.1", "$H/proj/.venv"},
	pathDirs: []string{"$H/proj/.venv/bin"},
}, {
	name:     "a pyenv shim needs pyenv",
	files:    map[string]string{".pyenv/shims/python3": "#!/usr/bin/env bash\n", ".pyenv/libexec/pyenv": "x"},
	command:  "python3",
	args:     []string{"-m", "srv"},
	path:     "$H/.pyenv/shims:/usr/bin",
	wantPath: "$H/.pyenv/shims/python3",
	readOnly: []string{"$H/.pyenv"},
	pathDirs: []string{"$H/.pyenv/shims"},
}, {
	name:     "a link to a versioned install",
	files:    map[string]string{"opt/tool-1.2/tool": "\x7fELF", "bin/tool": "-> ../opt/tool-1.2/tool"},
	command:  "tool",
	path:     "$H/bin",
	wantPath: "$H/bin/tool",
	readOnly: []string{"$H/bin", "$H/opt/tool-1.2"},
	pathDirs: []string{"$H/bin"},
}, {
	name:     "a program right in the home: only the file",
	files:    map[string]string{"server": "\x7fELF"},
	command:  "$H/server",
	wantPath: "$H/server",
	readOnly: []string{"$H/server"},
}, {
	name:     "a node_modules right in the home: not the home",
	files:    map[string]string{"node_modules/.bin/srv": "-> ../srv/cli.js", "node_modules/srv/cli.js": "#!/bin/sh\n"},
	command:  "$H/node_modules/.bin/srv",
	wantPath: "$H/node_modules/.bin/srv",
	readOnly: []string{"$H/node_modules"},
	pathDirs: []string{"$H/node_modules/.bin"},
}, {
	name:     "npx gets its cache",
	files:    map[string]string{"tools/npx": "#!/bin/sh\n", ".npm/_npx/": "", ".npm/_cacache/": ""},
	command:  "npx",
	args:     []string{"-y", "@scope/server"},
	path:     "$H/tools:/usr/bin",
	wantPath: "$H/tools/npx",
	readOnly: []string{"$H/.npm/_npx", "$H/tools"},
	pathDirs: []string{"$H/tools"},
}, {
	name:     "uvx gets uv's cache and Pythons",
	files:    map[string]string{".local/bin/uvx": "\x7fELF", ".cache/uv/": "", ".local/share/uv/python/": "", ".local/share/keyrings/": ""},
	command:  "uvx",
	args:     []string{"mcp-server-time"},
	path:     "$H/.local/bin",
	wantPath: "$H/.local/bin/uvx",
	readOnly: []string{"$H/.cache/uv", "$H/.local/bin", "$H/.local/share/uv/python"},
	pathDirs: []string{"$H/.local/bin"},
}, {
	name: "paths among the arguments, not the credentials",
	files: map[string]string{
		"bin/srv": "\x7fELF", "proj/data/": "", "proj2/build/index.js": "x",
		".aws/credentials": "secret", ".config/gh/hosts.yml": "secret",
	},
	command:  "srv",
	args:     []string{"--root=$H/proj/data", "$H/proj2/build/index.js", "$H/.aws/credentials", "--token-file", "$H/.config/gh/hosts.yml", "$H", "/", "/etc/passwd", "$H/missing"},
	path:     "$H/bin",
	wantPath: "$H/bin/srv",
	readOnly: []string{"$H/bin", "$H/proj/data", "$H/proj2/build"},
	pathDirs: []string{"$H/bin"},
}, {
	name:     "nothing inside credentials",
	files:    map[string]string{".ssh/bin/srv": "\x7fELF"},
	command:  "$H/.ssh/bin/srv",
	wantPath: "$H/.ssh/bin/srv",
}, {
	name:    "not found",
	command: "no-such-mcp-server",
	path:    "$H/bin:/usr/bin",
	err:     "no-such-mcp-server: not found in PATH",
}, {
	name:    "relative PATH entries are not searched",
	files:   map[string]string{"bin/srv": "x"},
	command: "srv",
	path:    ":.:bin",
	err:     "not found",
}, {
	name:    "an interpreter that is not there",
	files:   map[string]string{"bin/srv": "#!/usr/bin/env no-such-interpreter\n"},
	command: "srv",
	path:    "$H/bin",
	err:     "its interpreter no-such-interpreter: not found in PATH",
}, {
	name:    "a loop of interpreters",
	files:   map[string]string{"bin/a": "#!$H/bin/b\n", "bin/b": "#!$H/bin/a\n"},
	command: "a",
	path:    "$H/bin",
	err:     "too many interpreters",
}}

func TestProgramDirs(t *testing.T) {
	for _, tc := range programCases {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			expand := func(s string) string { return strings.ReplaceAll(s, "$H", home) }
			files := map[string]string{"./": ""}
			for k, v := range tc.files {
				files[k] = expand(v)
			}
			writeTree(t, home, files)
			t.Chdir(home) // so that relative PATH entries would find something
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = expand(a)
			}
			p, err := programDirs(expand(tc.command), args, expand(tc.path), home)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Program{Path: expand(tc.wantPath)}
			for _, d := range tc.readOnly {
				want.ReadOnly = append(want.ReadOnly, expand(d))
			}
			for _, d := range tc.pathDirs {
				want.PathDirs = append(want.PathDirs, expand(d))
			}
			if p.Path != want.Path || !slices.Equal(p.ReadOnly, want.ReadOnly) || !slices.Equal(p.PathDirs, want.PathDirs) {
				t.Errorf("got\n  %+v\nwant\n  %+v", p, want)
			}
			for _, d := range p.ReadOnly {
				if d == "/" || d == home || within(home, d) {
					t.Errorf("%s shows the whole home", d)
				}
			}
		})
	}
}

func TestEnvProgram(t *testing.T) {
	for in, want := range map[string]string{
		"node":                      "node",
		"-S node --flag":            "node",
		"-Snode --flag":             "node",
		"-i PATH=/x python3":        "python3",
		"-u HOME node":              "node",
		"--split-string python3 -u": "python3",
		"-- deno run":               "deno",
		"":                          "",
		"-i":                        "",
	} {
		if got := envProgram(strings.Fields(in)); got != want {
			t.Errorf("env %s: got %q, want %q", in, got, want)
		}
	}
}

func TestProgramDirsRealNpx(t *testing.T) {
	if _, err := os.Stat("/usr/bin/npx"); err != nil {
		t.Skip("no npx in /usr/bin")
	}
	p, err := programDirs("npx", nil, "/usr/bin:/bin", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != "/usr/bin/npx" || len(p.ReadOnly) != 0 || len(p.PathDirs) != 0 {
		t.Errorf("a system npx needs nothing more: %+v", p)
	}
}
