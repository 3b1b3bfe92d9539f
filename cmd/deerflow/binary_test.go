package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/documents"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/deerflow once per test process and returns its path.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deerflow-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "deerflow")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	documents.RunChild() // in-process serves convert uploads with this binary
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// telegramConfig writes a config.yaml in dir for serve with the Telegram
// channel (token as given, e.g. "${TG_TOKEN}") and the fake model.
func telegramConfig(t *testing.T, dir, modelURL, token, apiURL string) string {
	return writeConfig(t, dir, `
models:
  - name: default
    model: fake-model
    base_url: `+modelURL+`
    api_key: test
channels:
  telegram:
    enabled: true
    bot_token: `+token+`
    api_url: `+apiURL+`
memory:
  enabled: false
`)
}

// startBinaryServe starts `deerflow serve --config cfgPath` in dir with the
// clean environment plus env. It is killed when the test ends; its stderr
// is logged if the test failed.
func startBinaryServe(t *testing.T, dir, cfgPath string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary(t), "serve", "--config", cfgPath)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	return cmd
}

// deerflow runs the binary with args and stdin in dir, returning stdout,
// stderr and the exit code.
func deerflow(t *testing.T, dir, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(cleanEnv(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// cleanEnv is the test process environment without anything that would
// configure deerflow behind the test's back.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OPENAI_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBinaryVersionAndUsage(t *testing.T) {
	out, _, code := deerflow(t, t.TempDir(), "", nil, "version")
	if code != 0 || !strings.HasPrefix(out, "deerflow ") {
		t.Errorf("version: %d %q", code, out)
	}
	_, errOut, code := deerflow(t, t.TempDir(), "", nil, "frobnicate")
	if code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q", code, errOut)
	}
}

func TestBinaryConfigErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"unknown key", "agent:\n  max_turns: 5\n  max_turnz: 6\n", []string{"config.yaml:3", "agent.max_turnz"}},
		{"bad type", "agent:\n  max_turns: lots\n", []string{"config.yaml:2", "agent.max_turns"}},
		{"enabled without token", "channels:\n  telegram:\n    enabled: true\n", []string{"channels.telegram.bot_token"}},
		{"bad url", "models:\n  - name: m\n    model: x\n    base_url: not a url\n", []string{"config.yaml:4", "models[0].base_url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeConfig(t, dir, tt.body)
			for _, cmd := range []string{"check", "chat", "serve"} {
				_, errOut, code := deerflow(t, dir, "", nil, cmd, "--config", p)
				if code != 1 {
					t.Errorf("%s: exit %d, want 1", cmd, code)
				}
				for _, w := range tt.want {
					if !strings.Contains(errOut, w) {
						t.Errorf("%s: stderr %q lacks %q", cmd, errOut, w)
					}
				}
			}
		})
	}
	_, errOut, code := deerflow(t, dir, "", nil, "check", "--config", filepath.Join(dir, "missing.yaml"))
	if code != 1 || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("missing config: %d %q", code, errOut)
	}
}

func TestBinaryCheckPrintsWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	p := writeConfig(t, dir, "models:\n  - name: main\n    model: gpt-x\n    base_url: http://127.0.0.1:1/v1\n    api_key: ${MY_KEY}\n")
	out, errOut, code := deerflow(t, dir, "", []string{"MY_KEY=sk-very-secret"}, "check", "--config", p)
	if code != 0 {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "main (default): gpt-x") || !strings.Contains(out, "api key set") {
		t.Errorf("check output:\n%s", out)
	}
	if strings.Contains(out+errOut, "sk-very-secret") {
		t.Error("check printed the key")
	}
}

func TestBinaryChatPiped(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Key = "k-123"
	fake.Script(fakeopenai.Turn{Text: "Hello from the fake model."}, fakeopenai.Turn{Text: "Second answer."})
	dir := t.TempDir()
	// No config file: defaults plus the environment, as the README says.
	env := []string{"OPENAI_API_KEY=k-123", "OPENAI_BASE_URL=" + fake.URL, "OPENAI_MODEL=fake-model"}
	out, errOut, code := deerflow(t, dir, "hi there\n/status\nand again\n", env, "chat")
	if code != 0 {
		t.Fatalf("chat: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"Hello from the fake model.", "Model: default (fake-model)", "Second answer."} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".deerflow", "deerflow.db")); err != nil {
		t.Errorf("no database in the default data_dir: %v", err)
	}
}

func TestBinarySecondInstanceFailsFast(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(fakeopenai.Turn{Text: "first instance here"})
	dir := t.TempDir()
	env := []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + fake.URL}

	first := exec.Command(binary(t), "chat")
	first.Dir, first.Env = dir, append(cleanEnv(), env...)
	stdin, err := first.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Wait()
	defer stdin.Close()
	fmt.Fprintln(stdin, "hello")
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "first instance here") {
	}

	_, errOut, code := deerflow(t, dir, "hello\n", env, "chat")
	want := "another deerflow is using " + filepath.Join(".deerflow", "deerflow.db")
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("second instance: exit %d, stderr %q, want %q", code, errOut, want)
	}
}
