package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// modelsServer answers GET /v1/models on 127.0.0.1 with status and body;
// auth returns the Authorization header of each request so far.
func modelsServer(t *testing.T, status int, body string) (s *httptest.Server, auth func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	s = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// The shape of OpenAI's API reference, "List models".
const modelsList = `{"object": "list", "data": [
	{"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
	{"id": "o3", "object": "model", "created": 1744225308, "owned_by": "system"}]}`

func TestListModels(t *testing.T) {
	s, auth := modelsServer(t, 200, modelsList)
	ids, err := ListModels(context.Background(), Options{BaseURL: s.URL + "/v1/", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"gpt-4o-mini", "o3"}) || !slices.Equal(auth(), []string{"Bearer sk-test"}) {
		t.Errorf("ids %q, authorization %q", ids, auth())
	}

	s, auth = modelsServer(t, 200, `{"object": "list", "data": []}`)
	ids, err = ListModels(context.Background(), Options{BaseURL: s.URL + "/v1", HTTPClient: s.Client()})
	if err != nil || len(ids) != 0 || !slices.Equal(auth(), []string{""}) {
		t.Errorf("ids %q, err %v, authorization %q", ids, err, auth())
	}
}

func TestListModelsErrors(t *testing.T) {
	const key = "sk-secret-key"
	tests := []struct {
		name, body string
		status     int
		kind       Kind
		provider   string // the ProviderMessage
	}{
		{"bad key", `{"error": {"message": "Incorrect API key provided: sk-secret-key.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`,
			401, KindAuth, "Incorrect API key provided: [redacted]."},
		{"forbidden", `{"error": {"message": "not allowed", "type": "permission_error", "code": null}}`, 403, KindAuth, "not allowed"},
		{"rate limited", `{"error": {"message": "slow down", "type": "requests", "code": 429}}`, 429, KindRateLimit, "slow down"},
		{"error as text", `{"error": "upstream failed"}`, 500, KindServer, "upstream failed"},
		{"html", `<html>bad gateway</html>`, 502, KindServer, ""},
		{"not a list", `{"object": "list", "data": "gpt-4o"}`, 200, KindBadOutput, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := modelsServer(t, tt.status, tt.body)
			_, err := ListModels(context.Background(), Options{BaseURL: s.URL + "/v1", APIKey: key})
			e := kindOf(t, err)
			if e.Kind != tt.kind || e.ProviderMessage != tt.provider || strings.Contains(e.Error(), key) {
				t.Errorf("%+v", e)
			}
			if tt.status != 200 && e.Status != tt.status {
				t.Errorf("status %d", e.Status)
			}
		})
	}
}

func TestListModelsUnreachable(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	s.Close()
	_, err := ListModels(context.Background(), Options{BaseURL: s.URL + "/v1"})
	if e := kindOf(t, err); e.Kind != KindUnreachable {
		t.Errorf("%+v", e)
	}

	_, err = ListModels(context.Background(), Options{})
	if e := kindOf(t, err); e.Kind != KindNoKey {
		t.Errorf("%+v", e)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, auth := modelsServer(t, 200, modelsList)
	if _, err := ListModels(ctx, Options{BaseURL: s.URL + "/v1"}); !errors.Is(err, context.Canceled) || len(auth()) != 0 {
		t.Errorf("err %v, %d requests", err, len(auth()))
	}
}
