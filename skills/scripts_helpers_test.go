package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/skills"
	"github.com/deerflow/deerflow/tools"
)

// The public skills' scripts are run the way the agent runs them: a bash
// command with virtual paths (/mnt/skills/public/..., /mnt/user-data/...),
// inside the bubblewrap sandbox when it works here, else on the host with
// the virtual paths rewritten to the test's directories.

const (
	skillsRoot = "/mnt/skills/public"
	userData   = "/mnt/user-data"
	threadID   = "skills-test"
)

// box runs skill commands for one test.
type box struct {
	t        *testing.T
	reg      *tools.Registry // nil: on the host
	skills   string          // host dir shown at /mnt/skills/public
	userData string          // host dir shown at /mnt/user-data
	python   string          // host python3 (host mode)
}

// python3 finds the interpreter the sandbox uses: Debian's /usr/bin/python3
// (the one apt's python3-* packages are for), else python3 on PATH.
func python3(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; the skills' scripts need it (CI installs it)")
	}
	return p
}

// needModules skips t when python3 lacks one of the modules.
func needModules(t *testing.T, modules ...string) {
	t.Helper()
	py := python3(t)
	for _, m := range modules {
		if out, err := exec.Command(py, "-c", "import "+m).CombinedOutput(); err != nil {
			t.Skipf("python3 module %s is missing (%s); install the Debian packages in .ci/run", m, strings.TrimSpace(string(out)))
		}
	}
}

// newBox extracts the public skills and prepares a thread. hostNet lets
// sandboxed commands reach servers on this machine's loopback (the fakes).
func newBox(t *testing.T, hostNet bool) *box {
	t.Helper()
	b := &box{t: t, python: python3(t), skills: filepath.Join(t.TempDir(), "public")}
	if err := skills.Extract(b.skills); err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.New(sandbox.Options{
		DataDir:     t.TempDir(),
		SkillDirs:   []sandbox.Mount{{HostPath: b.skills, Path: skillsRoot, ReadOnly: true}},
		HostNetwork: hostNet,
		BashTimeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if b.userData, err = m.UserDataDir(threadID); err != nil {
		t.Fatal(err)
	}
	switch ok, how := m.BashStatus(); {
	case os.Getenv("DEERFLOW_TEST_SKILLS_ON_HOST") != "":
		t.Log("DEERFLOW_TEST_SKILLS_ON_HOST is set: running the scripts on the host")
	case ok:
		b.reg = tools.NewRegistry(m.Tools()...)
	default:
		t.Logf("bubblewrap unavailable (%s): running the scripts on the host", how)
	}
	for _, d := range []string{"uploads", "outputs", "workspace"} {
		if err := os.MkdirAll(filepath.Join(b.userData, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// host returns the host path of a virtual path under /mnt/user-data.
func (b *box) host(virtual string) string {
	rel, ok := strings.CutPrefix(virtual, userData+"/")
	if !ok {
		b.t.Fatalf("%s is not under %s", virtual, userData)
	}
	return filepath.Join(b.userData, filepath.FromSlash(rel))
}

// put copies a fixture (a path relative to the package) to a virtual path.
// On the host, the virtual paths the fixture names become host paths.
func (b *box) put(fixture, virtual string) {
	b.t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		b.t.Fatal(err)
	}
	if b.reg == nil {
		data = bytes.ReplaceAll(data, []byte(userData+"/"), []byte(b.userData+"/"))
	}
	b.write(virtual, data)
}

func (b *box) write(virtual string, data []byte) {
	b.t.Helper()
	p := b.host(virtual)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

var exitLine = regexp.MustCompile(`\n?\[exit code (\d+)\]\s*$`)

// run runs a bash command line and returns its output and exit status.
func (b *box) run(command string) (string, int) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if b.reg != nil {
		args, _ := json.Marshal(map[string]string{"command": command})
		out, err := b.reg.Call(tools.WithEnv(ctx, &tools.Env{ThreadID: threadID}), "bash", args)
		if err != nil {
			b.t.Fatalf("bash %q: %v", command, err)
		}
		if m := exitLine.FindStringSubmatch(out); m != nil {
			code, _ := strconv.Atoi(m[1])
			return out[:len(out)-len(m[0])], code
		}
		return out, 0
	}
	command = strings.ReplaceAll(command, skillsRoot, b.skills)
	command = strings.ReplaceAll(command, userData, b.userData)
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = filepath.Join(b.userData, "workspace")
	cmd.Env = append(hostEnv(), "PATH="+filepath.Dir(b.python)+":"+os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1", "HOME="+b.t.TempDir())
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatalf("bash %q: %v", command, err)
	}
	// Messages name virtual paths, as they do in the sandbox.
	text := strings.ReplaceAll(strings.ReplaceAll(string(out), b.userData, userData), b.skills, skillsRoot)
	return text, code
}

// hostEnv is this process's environment without the variables the
// scripts read, so that a developer's own settings cannot leak in.
func hostEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PATH", name == "HOME", strings.HasPrefix(name, "GITHUB_"), strings.HasPrefix(name, "IMAGE_"),
			strings.HasPrefix(name, "PYTHON"), name == "MPLBACKEND":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// mustRun runs command and fails the test unless it exits 0.
func (b *box) mustRun(command string) string {
	b.t.Helper()
	out, code := b.run(command)
	if code != 0 {
		b.t.Fatalf("%s\nexit %d:\n%s", command, code, out)
	}
	return out
}

// mustFail runs command and fails the test unless it exits with code and
// its output holds want.
func (b *box) mustFail(command string, code int, want string) {
	b.t.Helper()
	out, got := b.run(command)
	if got != code || !strings.Contains(out, want) {
		b.t.Errorf("%s\nexit %d (want %d), output lacks %q:\n%s", command, got, code, want, out)
	}
}

// checkPNG decodes a PNG and checks it has the size of a real picture and
// more than one colour (a blank canvas is a failure too).
func checkPNG(t *testing.T, path string) image.Image {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	r := img.Bounds()
	if r.Dx() < 100 || r.Dy() < 100 {
		t.Errorf("%s is only %dx%d", path, r.Dx(), r.Dy())
	}
	colours := map[color.RGBA64]bool{}
	for y := r.Min.Y; y < r.Max.Y && len(colours) < 3; y += 3 {
		for x := r.Min.X; x < r.Max.X && len(colours) < 3; x += 3 {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			colours[color.RGBA64{uint16(cr), uint16(cg), uint16(cb), uint16(ca)}] = true
		}
	}
	if len(colours) < 2 {
		t.Errorf("%s is blank: one colour", path)
	}
	return img
}

// tinyPNG is a real 160x120 PNG with a coloured block, encoded by Go.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 160, 120))
	for y := 0; y < 120; y++ {
		for x := 0; x < 160; x++ {
			c := color.RGBA{255, 255, 255, 255}
			if x > 30 && x < 130 && y > 40 {
				c = color.RGBA{31, 78, 121, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
