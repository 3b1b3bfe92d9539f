package skills_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// fakeGitHub serves api.github.com's answers for octocat/Hello-World from
// testdata (GitHub's REST API documentation examples, trimmed) and records
// what it was asked.
type fakeGitHub struct {
	mu       sync.Mutex
	paths    []string
	auth     []string
	limitHit bool // answer every request as over the rate limit
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	limit := f.limitHit
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if limit {
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "1700000000")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"message": "API rate limit exceeded for 127.0.0.1.", "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`))
		return
	}
	if r.Header.Get("Accept") != "application/vnd.github+json" || r.Header.Get("User-Agent") == "" {
		http.Error(w, `{"message": "bad headers"}`, http.StatusBadRequest)
		return
	}
	const repo = "/repos/octocat/Hello-World"
	files := map[string]string{
		repo: "repo", repo + "/languages": "languages", repo + "/contributors": "contributors",
		repo + "/releases": "releases", repo + "/commits": "commits", repo + "/issues": "issues",
		repo + "/pulls": "pulls", repo + "/readme": "readme",
	}
	name, ok := files[r.URL.Path]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}`))
		return
	}
	if name == "releases" { // one part failing must not sink the brief
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"message": "Server Error"}`))
		return
	}
	data, err := os.ReadFile("testdata/github-research/" + name + ".json")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(data)
}

func TestGitHubResearch(t *testing.T) {
	python3(t)
	fake := &fakeGitHub{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	b := newBox(t, true)
	gh := "GITHUB_API_URL=" + srv.URL + " python3 /mnt/skills/public/github-research/scripts/github_repo.py "

	out := b.mustRun(gh + "https://github.com/octocat/Hello-World --output /mnt/user-data/outputs/hello.md --json /mnt/user-data/workspace/hello.json")
	wantAll(t, "github_repo", out, "wrote /mnt/user-data/outputs/hello.md (8 API calls; missing: releases)")
	md, _ := os.ReadFile(b.host("/mnt/user-data/outputs/hello.md"))
	wantAll(t, "the brief", string(md), "# octocat/Hello-World", "| Description | This your first repo! |", "| Stars | 80 |",
		"| Forks | 9 |", "| License | MIT |", "| Last push | 2011-01-26 |", "| Topics | octocat, atom, electron, api |",
		"- C: 91.0%", "- Python: 9.0%", "| octocat | 32 |", "6dcb09b by octocat: Fix all the bugs",
		"- #1347 [open] Found a bug (by octocat, updated 2011-04-22, bug)", "- #1347 [merged] Amazing new feature",
		"# Hello World", "My first repository on GitHub.", "## Not available", "- releases: HTTP 500 Server Error")
	if strings.Contains(string(md), "#1348") {
		t.Error("a pull request was listed among the issues")
	}
	var raw map[string]any
	if data, err := os.ReadFile(b.host("/mnt/user-data/workspace/hello.json")); err != nil || json.Unmarshal(data, &raw) != nil || raw["repo"] == nil {
		t.Errorf("the raw JSON is not there: %v", err)
	}
	for _, a := range fake.auth {
		if a != "" {
			t.Fatalf("sent Authorization %q without GITHUB_TOKEN", a)
		}
	}

	b.mustRun("GITHUB_TOKEN=ghp_test " + gh + "octocat/Hello-World --items 3 --output /mnt/user-data/outputs/tok.md")
	if last := fake.auth[len(fake.auth)-1]; last != "Bearer ghp_test" {
		t.Errorf("with GITHUB_TOKEN, Authorization = %q", last)
	}
	b.mustFail(gh+"octocat/Nope --output /mnt/user-data/outputs/x.md", 1, "repository octocat/Nope: not found (404)")
	b.mustFail(gh+"'not a repo'", 1, "is not a repository")
	fake.mu.Lock()
	fake.limitHit = true
	fake.mu.Unlock()
	b.mustFail(gh+"octocat/Hello-World", 1, "rate limit is used up until 22:13 UTC; set GITHUB_TOKEN")
	b.mustFail("GITHUB_API_URL=http://127.0.0.1:1 python3 /mnt/skills/public/github-research/scripts/github_repo.py octocat/Hello-World", 1, "cannot reach http://127.0.0.1:1")
}

// fakeImages is an OpenAI-compatible images endpoint that answers with a
// real PNG as b64_json.
type fakeImages struct {
	png  []byte
	mu   sync.Mutex
	body map[string]any
	auth string
}

func (f *fakeImages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/images/generations" {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error": {"message": "bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.body, f.auth = body, r.Header.Get("Authorization")
	f.mu.Unlock()
	if strings.Contains(body["prompt"].(string), "forbidden") {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error": {"message": "Your request was rejected by the safety system.", "type": "image_generation_user_error"}}`))
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"created": 1713833628, "data": []map[string]string{{"b64_json": base64.StdEncoding.EncodeToString(f.png)}}})
}

func TestImageGeneration(t *testing.T) {
	python3(t)
	fake := &fakeImages{png: tinyPNG(t)}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	b := newBox(t, true)
	b.put("testdata/image-generation/brief.json", "/mnt/user-data/workspace/fox.json")
	const gen = "python3 /mnt/skills/public/image-generation/scripts/generate_image.py "

	// Without a service: a clear message, the prompt file, no image.
	b.mustFail(gen+"--brief /mnt/user-data/workspace/fox.json --output /mnt/user-data/outputs/fox.png", 2,
		"NO IMAGE: no image service is configured (IMAGE_API_BASE_URL is not set)")
	prompt, err := os.ReadFile(b.host("/mnt/user-data/outputs/fox.prompt.md"))
	if err != nil {
		t.Fatal("no prompt file without a service")
	}
	wantAll(t, "the prompt file", string(prompt), "A red fox reading a newspaper on a park bench. Style: watercolour illustration.",
		"Avoid: text, watermarks.", "Size: 1536x1024")
	if _, err := os.Stat(b.host("/mnt/user-data/outputs/fox.png")); err == nil {
		t.Error("an image appeared without a service")
	}

	env := "IMAGE_API_BASE_URL=" + srv.URL + "/v1 IMAGE_API_KEY=sk-test IMAGE_MODEL=dall-e-3 "
	out := b.mustRun(env + gen + "--brief /mnt/user-data/workspace/fox.json --output /mnt/user-data/outputs/fox.png")
	wantAll(t, "generate_image", out, "wrote /mnt/user-data/outputs/fox.png", "model dall-e-3", "present_files")
	checkPNG(t, b.host("/mnt/user-data/outputs/fox.png"))
	fake.mu.Lock()
	body, auth := fake.body, fake.auth
	fake.mu.Unlock()
	if auth != "Bearer sk-test" || body["model"] != "dall-e-3" || body["size"] != "1536x1024" || body["response_format"] != "b64_json" ||
		!strings.HasPrefix(body["prompt"].(string), "A red fox reading a newspaper") {
		t.Errorf("the service got %v with Authorization %q", body, auth)
	}

	b.mustFail(env+gen+"--prompt 'a forbidden thing' --output /mnt/user-data/outputs/no.png", 1,
		"the image service refused (HTTP 400): Your request was rejected by the safety system.")
	b.mustFail(env+gen+"--brief /mnt/user-data/workspace/gone.json --output /mnt/user-data/outputs/no.png", 1, "no such brief file")
	b.write("/mnt/user-data/workspace/empty.json", []byte(`{"style": "oil"}`))
	b.mustFail(env+gen+"--brief /mnt/user-data/workspace/empty.json --output /mnt/user-data/outputs/no.png", 1, "needs a \"subject\"")
}
