// Package gateway serves the routes DeerFlow's web UI calls beyond
// LangGraph's protocol: auth status, feature flags, models, skills,
// memory, MCP configuration, channels, suggestions, a thread's uploads
// and its artifacts. It is mounted on the api package's mux (through
// api.Options.Routes), so every route sits under /api behind the same
// bearer token; errors are FastAPI-shaped, {"detail": "..."}, as the UI
// reads them.
//
// Routes (JSON unless said otherwise):
//
//	GET    /api/v1/auth/setup-status                   {needs_setup, registration_enabled}
//	GET    /api/v1/auth/me                             the operator as a DeerFlow user
//	POST   /api/v1/auth/logout                         no-op (there are no sessions)
//	GET    /api/agents                                 {agents}: the named agents
//	GET    /api/features                               {agents_api, browser_control, mcp_tasks}
//	GET    /api/models                                 {models, token_usage}
//	GET    /api/models/{name}                          one model
//	GET    /api/skills                                 {skills}
//	PUT    /api/skills/{name}                          {enabled} → the skill
//	GET    /api/memory[?user_id=]                      a person's memory (UserMemory)
//	GET    /api/memory/export[?user_id=]               the same
//	GET    /api/mcp/config                             {mcp_servers}, secrets masked
//	GET    /api/channels/providers                     {enabled, providers}
//	GET    /api/channels/connections                   {connections: []}
//	GET    /api/suggestions/config                     {enabled, max_suggestions}
//	POST   /api/threads/{id}/uploads                   multipart "files" → UploadResponse
//	GET    /api/threads/{id}/uploads/list              {files, count}
//	GET    /api/threads/{id}/uploads/limits            {max_files, max_file_size, max_total_size}
//	DELETE /api/threads/{id}/uploads/{filename}        {success, message}
//	GET    /api/threads/{id}/artifacts/{virtual path}  the file (?download=true: attachment)
//	GET    /api/threads/{id}/messages/page             {data, has_more, next_before_seq}: history, newest page first
//	GET    /api/threads/{id}/token-usage               the thread's tokens, by model and caller
//
// The UI's writes that deerflow has no counterpart for (installing a
// .skill archive, editing MCP servers, editing memory facts) answer 501
// with a detail saying where the thing is configured instead.
package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/skills"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/uploads"
)

// Files is what the gateway needs of the sandbox (*sandbox.Manager): a
// thread's uploads and outputs, always through its safe path handling.
type Files interface {
	ListUploads(threadID string) ([]sandbox.UploadInfo, error)
	OpenUpload(threadID, vpath string) (*os.File, error)
	RemoveUpload(threadID, vpath string) error
	Reopen(threadID, vpath string) (event.File, error)
}

// Intake saves an upload and converts a document to Markdown beside it
// (*uploads.Intake).
type Intake interface {
	Save(ctx context.Context, threadID string, a bus.Attachment) (uploads.Saved, error)
}

// Skills is what the gateway needs of *skills.Manager.
type Skills interface {
	All() []*skills.Skill
	Lookup(name string) (*skills.Skill, bool)
	Command(userID, args string) string
}

// Options configures a Gateway. Config is required; a nil part turns its
// routes into a 404 or 503 saying so.
type Options struct {
	Config *config.Config
	Files  Files
	Intake Intake
	Skills Skills
	// Store holds the memory (read-only here).
	Store *store.Store
	// Scheduler reports whether scheduled tasks run (scheduler.enabled
	// and a scheduler built).
	Scheduler bool
	// MaxBody is the largest request body the API accepts (api.Options
	// MaxBody after defaults): the upload limits never promise more.
	// 0: 1 MiB.
	MaxBody int64
	// Agents lists the named agents (GET /api/agents); nil: none.
	Agents func() []lgwire.Agent
	// Operator is the id of the one user the token stands for (default
	// "default", the id DeerFlow's UI uses with DEER_FLOW_AUTH_DISABLED=1);
	// its email is Operator@localhost unless OperatorEmail is set.
	Operator      string
	OperatorEmail string
	Logger        *slog.Logger
}

// Gateway serves the routes. It is safe for concurrent use.
type Gateway struct {
	o   Options
	log *slog.Logger
}

// New returns a Gateway.
func New(o Options) *Gateway {
	if o.Config == nil {
		o.Config = &config.Config{}
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.Operator == "" {
		o.Operator = "default"
	}
	if o.OperatorEmail == "" {
		o.OperatorEmail = o.Operator + "@localhost"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Gateway{o: o, log: o.Logger}
}

// Register adds the routes to mux (api.Options.Routes).
func (g *Gateway) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/agents", g.listAgents)
	mux.HandleFunc("GET /api/v1/auth/setup-status", g.setupStatus)
	mux.HandleFunc("GET /api/v1/auth/me", g.me)
	mux.HandleFunc("POST /api/v1/auth/logout", g.logout)
	mux.HandleFunc("GET /api/features", g.features)
	mux.HandleFunc("GET /api/models", g.models)
	mux.HandleFunc("GET /api/models/{name}", g.model)
	mux.HandleFunc("GET /api/skills", g.listSkills)
	mux.HandleFunc("PUT /api/skills/{name}", g.switchSkill)
	mux.HandleFunc("POST /api/skills/install", g.installSkill)
	mux.HandleFunc("GET /api/memory", g.memory)
	mux.HandleFunc("GET /api/memory/export", g.memory)
	mux.HandleFunc("/api/memory/", g.memoryWrite)
	mux.HandleFunc("DELETE /api/memory", g.memoryWrite)
	mux.HandleFunc("GET /api/mcp/config", g.mcpConfig)
	mux.HandleFunc("/api/mcp/config", g.mcpWrite)
	mux.HandleFunc("GET /api/channels/providers", g.channelProviders)
	mux.HandleFunc("GET /api/channels/connections", g.channelConnections)
	mux.HandleFunc("GET /api/suggestions/config", g.suggestionsConfig)
	mux.HandleFunc("POST /api/threads/{id}/uploads", g.upload)
	mux.HandleFunc("GET /api/threads/{id}/uploads/list", g.listUploads)
	mux.HandleFunc("GET /api/threads/{id}/uploads/limits", g.uploadLimits)
	mux.HandleFunc("DELETE /api/threads/{id}/uploads/{filename}", g.deleteUpload)
	mux.HandleFunc("GET /api/threads/{id}/artifacts/{path...}", g.artifact)
	mux.HandleFunc("GET /api/threads/{id}/messages/page", g.messagesPage)
	mux.HandleFunc("GET /api/threads/{id}/token-usage", g.tokenUsage)
}

// reply writes v as JSON with status.
func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// detail is the body of an error, as FastAPI writes it.
type detail struct {
	Detail string `json:"detail"`
}

// fail writes {"detail": msg} with status.
func fail(w http.ResponseWriter, status int, msg string) {
	reply(w, status, detail{msg})
}

// notHere answers a UI write deerflow has no counterpart for.
func notHere(w http.ResponseWriter, msg string) {
	fail(w, http.StatusNotImplemented, msg)
}

// readJSON decodes a small JSON body into v; false after answering 400.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "The body must be JSON: "+err.Error())
		return false
	}
	return true
}

// IsUpload reports whether r uploads files (POST /api/threads/{id}/uploads):
// the API lets such bodies be larger (api.Options.Uploads).
func IsUpload(r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/threads/")
	id, tail, _ := strings.Cut(rest, "/")
	return ok && r.Method == http.MethodPost && id != "" && tail == "uploads"
}

// listAgents answers GET /api/agents.
func (g *Gateway) listAgents(w http.ResponseWriter, r *http.Request) {
	list := []lgwire.Agent{}
	if g.o.Agents != nil {
		list = append(list, g.o.Agents()...)
	}
	reply(w, http.StatusOK, struct {
		Agents []lgwire.Agent `json:"agents"`
	}{list})
}
