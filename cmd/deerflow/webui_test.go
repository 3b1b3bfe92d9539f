package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// The DeerFlow web UI test: ByteDance DeerFlow's own Next.js frontend,
// built from a checkout of its frontend/ and served by `pnpm start`, chats
// with deerflow in headless Chromium (.ci/webui/chat.mjs, playwright-core
// with the system chromium).
//
// To run it (the artifacts: screenshots of failed steps, the browser's
// request log, its console errors, each event stream as proxied):
//
//	git clone https://github.com/bytedance/deer-flow /tmp/deer-flow
//	cd /tmp/deer-flow/frontend && npm i -g pnpm@10 && pnpm install --frozen-lockfile
//	DEER_FLOW_INTERNAL_GATEWAY_BASE_URL=http://127.0.0.1:28001 pnpm build
//	apt-get install chromium
//	cd <this repo> && (cd .ci/webui && npm ci) && mkdir -p /tmp/webui-out
//	DEERFLOW_UI_DIR=/tmp/deer-flow/frontend go test ./cmd/deerflow -run TestDeerFlowWebUI -v -artifacts -outputdir /tmp/webui-out
//
// Next.js bakes its /api rewrites (to DEER_FLOW_INTERNAL_GATEWAY_BASE_URL)
// into the build, so the test reads the gateway address from
// .next/routes-manifest.json and serves deerflow's API there.
//
// The UI sends no API token (it authenticates with a session cookie, or
// not at all with DEER_FLOW_AUTH_DISABLED=1), so deerflow runs with
// http.trust_loopback, the documented setup for a UI server on the same
// machine. Between the two sits a loopback reverse proxy that adds
// nothing: it logs every request the UI made, server side (SSR) and
// browser alike, with the status and, for a failure, the body.
func TestDeerFlowWebUI(t *testing.T) {
	uiDir := os.Getenv("DEERFLOW_UI_DIR")
	if uiDir == "" {
		t.Skip("DEERFLOW_UI_DIR is not set: the DeerFlow web UI test needs a checkout of its frontend/, which CI cannot fetch")
	}
	gatewayAddr := uiGatewayAddr(t, uiDir)
	chromium := os.Getenv("DEERFLOW_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if chromium != "" {
			break
		}
		chromium, _ = exec.LookPath(name)
	}
	if chromium == "" {
		t.Fatal("no chromium: install it (apt-get install chromium) or set DEERFLOW_CHROMIUM")
	}
	script, err := filepath.Abs("../../.ci/webui/chat.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "playwright-core")); err != nil {
		t.Fatal("playwright-core is not installed: run (cd .ci/webui && npm ci)")
	}
	pnpm, err := exec.LookPath("pnpm")
	if err != nil {
		t.Fatal("no pnpm: npm i -g pnpm@10")
	}

	// The model (tool call ids unique in the thread, as real providers
	// make them): a hello answers; a report is written with write_file,
	// presented, then announced; a delegation runs one subagent task; a
	// subagent (offered no task tool) answers; anything without tools (a
	// title, suggestions) gets a short text.
	report := "# Web UI report\n\nWEBUI-REPORT-BODY written in the sandbox.\n"
	upload := filepath.Join(t.TempDir(), "webui-notes.txt")
	if err := os.WriteFile(upload, []byte("WEBUI-NOTES: apples 3, pears 2.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := map[string]map[string]string{
		"hello": {"prompt": "HELLO-WEBUI say hello", "answer": "WEBUI-ANSWER: hello from deerflow, streamed in pieces."},
		"report": {"prompt": "REPORT-WEBUI write the report from my notes", "upload": upload,
			"toolLabel": "Write the web UI report", "artifactName": "report.md",
			"artifactText": "WEBUI-REPORT-BODY", "answer": "WEBUI-REPORT-READY: your report is ready."},
		"delegate": {"prompt": "DELEGATE-WEBUI count the apples", "subagent": "Count the apples",
			"answer": "WEBUI-DELEGATED: the subagent counted 3 apples."},
	}
	var mu sync.Mutex
	var sawUpload bool
	var reportRequest []fakeopenai.Message
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if len(r.Tools) == 0 {
			return fakeopenai.Turn{Text: "Web UI chat"}
		}
		if !slices.Contains(r.ToolNames(), "task") { // a subagent
			return fakeopenai.Turn{Text: "There are 3 apples.", Delay: 30 * time.Millisecond}
		}
		user, tools := "", 0
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if r.Messages[i].Role == "user" {
				user = r.Messages[i].Content
				break
			}
			if r.Messages[i].Role == "tool" {
				tools++
			}
		}
		switch {
		case strings.Contains(user, "REPORT-WEBUI"):
			mu.Lock()
			if reportRequest == nil {
				reportRequest = r.Messages
			}
			for _, m := range r.Messages {
				if m.Role == "user" && strings.Contains(m.Content, "webui-notes.txt") {
					sawUpload = true
				}
			}
			mu.Unlock()
			switch tools {
			case 0:
				args, _ := json.Marshal(map[string]string{"description": sc["report"]["toolLabel"], "path": "/mnt/user-data/outputs/report.md", "content": report})
				return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_webui_write", Name: "write_file", Arguments: string(args)}}}
			case 1:
				return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_webui_present", Name: "present_files", Arguments: `{"filepaths":["/mnt/user-data/outputs/report.md"]}`}}}
			}
			return fakeopenai.Turn{Text: sc["report"]["answer"], Delay: 20 * time.Millisecond}
		case strings.Contains(user, "DELEGATE-WEBUI"):
			if tools == 0 {
				args, _ := json.Marshal(map[string]string{"description": sc["delegate"]["subagent"], "prompt": "count the apples", "subagent_type": "general-purpose"})
				return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_webui_task", Name: "task", Arguments: string(args)}}}
			}
			return fakeopenai.Turn{Text: sc["delegate"]["answer"], Delay: 20 * time.Millisecond}
		case strings.Contains(user, "HELLO-WEBUI"):
			return fakeopenai.Turn{Text: sc["hello"]["answer"], Delay: 60 * time.Millisecond}
		}
		return fakeopenai.Turn{Text: "I was not scripted for: " + user}
	})

	// deerflow, API only, trusting loopback requests, and the logging
	// proxy on the UI's gateway address.
	addr := freeAddr(t)
	dir := t.TempDir()
	cfg := apiOnlyConfig(t, dir, addr, model.URL)
	if b, err := os.ReadFile(cfg); err != nil || os.WriteFile(cfg, bytes.Replace(b, []byte("http:\n"), []byte("http:\n  trust_loopback: true\n"), 1), 0o600) != nil {
		t.Fatal("writing the configuration with http.trust_loopback")
	}
	startBinaryServe(t, dir, cfg, "DEERFLOW_API_TOKEN="+apiToken)
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	if code, body := fetch("http://" + addr + "/api/models"); code != 200 {
		t.Fatalf("a loopback request without the token: %d %s (http.trust_loopback)", code, body)
	}
	out := t.ArtifactDir()
	proxyLog := startLogProxy(t, gatewayAddr, addr, out)

	// The UI, in its own process group so that next (pnpm's child) goes
	// with it.
	uiAddr := freeAddr(t)
	_, uiPort, _ := net.SplitHostPort(uiAddr)
	ui := exec.Command(pnpm, "start", "--port", uiPort, "--hostname", "127.0.0.1")
	ui.Dir = uiDir
	ui.Env = append(os.Environ(),
		"DEER_FLOW_AUTH_DISABLED=1",
		"DEER_FLOW_INTERNAL_GATEWAY_BASE_URL=http://"+gatewayAddr,
		"DEER_FLOW_TRUSTED_ORIGINS=http://"+uiAddr,
		"SKIP_ENV_VALIDATION=1",
		"NEXT_TELEMETRY_DISABLED=1",
		"NODE_ENV=production",
		// Any pnpm 10: not a switch to the version in package.json's
		// packageManager, which pnpm refuses when it cannot verify it.
		"npm_config_manage_package_manager_versions=false",
	)
	var uiOut lockedBuffer
	ui.Stdout, ui.Stderr = &uiOut, &uiOut
	ui.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ui.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-ui.Process.Pid, syscall.SIGKILL)
		ui.Wait()
		t.Logf("UI server log:\n%s", uiOut.String())
	})
	waitUI(t, "http://"+uiAddr+"/workspace", &uiOut)

	// The browser.
	scJSON, _ := json.Marshal(sc)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", script)
	node.Env = append(os.Environ(),
		"WEBUI_URL=http://"+uiAddr,
		"WEBUI_CHROMIUM="+chromium,
		"WEBUI_OUT="+out,
		"WEBUI_SCENARIO="+string(scJSON),
	)
	node.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	node.Cancel = func() error { return syscall.Kill(-node.Process.Pid, syscall.SIGKILL) }
	node.WaitDelay = 10 * time.Second
	res, err := node.CombinedOutput()
	t.Logf("browser (screenshots, requests.jsonl and console.log in %s):\n%s", out, res)
	t.Logf("requests through the gateway proxy:\n%s", proxyLog.String())
	if err != nil {
		t.Errorf("the browser script failed: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !sawUpload && bytes.Contains(res, []byte("ok upload")) {
		t.Errorf("the model was not told of the uploaded file webui-notes.txt; its report request: %+v", reportRequest)
	}
}

// uiGatewayAddr is the host:port the built UI's /api rewrites go to (Next.js
// bakes DEER_FLOW_INTERNAL_GATEWAY_BASE_URL in at build time).
func uiGatewayAddr(t *testing.T, uiDir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(uiDir, ".next", "routes-manifest.json"))
	if err != nil {
		t.Fatalf("the UI is not built (%v): run pnpm build in %s", err, uiDir)
	}
	var m struct {
		Rewrites json.RawMessage `json:"rewrites"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	type rewrite struct{ Source, Destination string }
	var list []rewrite
	if json.Unmarshal(m.Rewrites, &list) != nil {
		var phases map[string][]rewrite
		if err := json.Unmarshal(m.Rewrites, &phases); err != nil {
			t.Fatalf("routes-manifest.json rewrites: %v", err)
		}
		for _, l := range phases {
			list = append(list, l...)
		}
	}
	for _, r := range list {
		if r.Source == "/api/langgraph/:path*" {
			u, err := url.Parse(r.Destination)
			if err != nil || u.Host == "" {
				t.Fatalf("rewrite %s -> %s: not a URL", r.Source, r.Destination)
			}
			if h, _, _ := net.SplitHostPort(u.Host); h != "127.0.0.1" && h != "localhost" {
				t.Fatalf("the UI was built for the gateway %s: rebuild it with DEER_FLOW_INTERNAL_GATEWAY_BASE_URL=http://127.0.0.1:28001", u.Host)
			}
			return u.Host
		}
	}
	t.Fatalf("no /api/langgraph rewrite in the UI build (built with NEXT_PUBLIC_LANGGRAPH_BASE_URL?): rebuild it with only DEER_FLOW_INTERNAL_GATEWAY_BASE_URL set")
	return ""
}

// startLogProxy serves on listen a reverse proxy to deerflow at target
// that passes requests on as they are (no token) and logs each: method,
// path, status, and up to 400 bytes of a failure's body.
// Each event stream is saved whole as stream-N.txt in dump.
func startLogProxy(t *testing.T, listen, target, dump string) *lockedBuffer {
	t.Helper()
	var streams atomic.Int32
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatalf("the UI's gateway address %s: %v (something else listens there)", listen, err)
	}
	log := &lockedBuffer{}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			// A JSON request's body goes into the log line too.
			if strings.HasPrefix(r.In.Header.Get("Content-Type"), "application/json") && r.In.Body != nil {
				b, _ := io.ReadAll(io.LimitReader(r.In.Body, 1<<20))
				r.Out.Body = io.NopCloser(bytes.NewReader(b))
				r.Out.ContentLength = int64(len(b))
				excerpt := strings.Join(strings.Fields(string(b)), " ")
				var run struct {
					StreamMode any `json:"stream_mode"`
				}
				if json.Unmarshal(b, &run) == nil && run.StreamMode != nil {
					excerpt = fmt.Sprintf("(stream_mode %v) %s", run.StreamMode, excerpt)
				}
				if len(excerpt) > 300 {
					excerpt = excerpt[:300] + "…"
				}
				r.Out = r.Out.WithContext(context.WithValue(r.Out.Context(), sentBody{}, excerpt))
			}
			r.Out = r.Out.WithContext(context.WithValue(r.Out.Context(), sentAt{}, time.Now()))
			r.SetURL(&url.URL{Scheme: "http", Host: target})
			r.Out.Host = target
		},
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			took := time.Since(resp.Request.Context().Value(sentAt{}).(time.Time)).Round(time.Millisecond)
			line := fmt.Sprintf("%s %s -> %d %s in %v", resp.Request.Method, resp.Request.URL.RequestURI(), resp.StatusCode, resp.Header.Get("Content-Type"), took)
			if sent, ok := resp.Request.Context().Value(sentBody{}).(string); ok && sent != "" {
				line += " sent: " + sent
			}
			if resp.StatusCode >= 400 {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 400))
				resp.Body = struct {
					io.Reader
					io.Closer
				}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
				line += " body: " + strings.Join(strings.Fields(string(b)), " ")
			}
			log.WriteString(line + "\n")
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				start, what := resp.Request.Context().Value(sentAt{}).(time.Time), resp.Request.Method+" "+resp.Request.URL.Path
				el := &endLogger{ReadCloser: resp.Body}
				file := filepath.Join(dump, fmt.Sprintf("stream-%d.txt", streams.Add(1)))
				el.end = func(how string) {
					log.WriteString(fmt.Sprintf("  %s: stream %s after %v (%s)\n", what, how, time.Since(start).Round(time.Millisecond), filepath.Base(file)))
					os.WriteFile(file, el.seen.Bytes(), 0o644)
				}
				resp.Body = el
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if !errors.Is(err, context.Canceled) {
				log.WriteString(fmt.Sprintf("%s %s -> proxy error %v\n", r.Method, r.URL.RequestURI(), err))
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	srv := &http.Server{Handler: rp}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return log
}

// sentBody and sentAt are the context keys of a proxied request's body
// excerpt and the time it came in.
type (
	sentBody struct{}
	sentAt   struct{}
)

// endLogger calls end once, when its stream ends or is closed first.
type endLogger struct {
	io.ReadCloser
	seen        bytes.Buffer
	first, last time.Time // the first and last reads with a messages event
	once        sync.Once
	end         func(how string)
}

func (e *endLogger) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	if bytes.Contains(p[:n], []byte("event: messages")) {
		if e.first.IsZero() {
			e.first = time.Now()
		}
		e.last = time.Now()
	}
	e.seen.Write(p[:n])
	if err == io.EOF {
		e.once.Do(func() { e.end("ended" + e.events()) })
	}
	return n, err
}

func (e *endLogger) Close() error {
	e.once.Do(func() { e.end("closed by the client" + e.events()) })
	return e.ReadCloser.Close()
}

// events counts the stream's events by name, in order of first sight.
func (e *endLogger) events() string {
	var order []string
	count := map[string]int{}
	for _, line := range strings.Split(e.seen.String(), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			name = strings.TrimSpace(name)
			if count[name] == 0 {
				order = append(order, name)
			}
			count[name]++
		}
	}
	var b strings.Builder
	for _, name := range order {
		fmt.Fprintf(&b, " %s×%d", name, count[name])
	}
	if !e.first.IsZero() {
		fmt.Fprintf(&b, " (messages events over %v)", e.last.Sub(e.first).Round(time.Millisecond))
	}
	return ", events:" + b.String()
}

// waitUI polls url until the UI server answers it (not 5xx).
func waitUI(t *testing.T, url string, log *lockedBuffer) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if code, _ := fetch(url); code != 0 && code < 500 {
			return
		}
	}
	t.Fatalf("the UI never answered %s:\n%s", url, log.String())
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) WriteString(s string) {
	l.Write([]byte(s))
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
