package gateway

import (
	"net/http"
	"strings"
	"time"

	"github.com/deerflow/deerflow/store"
)

// section is one summary of DeerFlow's UserMemory.
type section struct {
	Summary   string `json:"summary"`
	UpdatedAt string `json:"updatedAt"`
}

// factJSON is DeerFlow's MemoryFact (frontend core/memory/types.ts).
type factJSON struct {
	ID         string  `json:"id"`
	Content    string  `json:"content"`
	Category   string  `json:"category"`
	Confidence float64 `json:"confidence"`
	CreatedAt  string  `json:"createdAt"`
	Source     string  `json:"source"`
}

// memoryJSON is DeerFlow's UserMemory. deerflow keeps three summaries
// (work, personal, top of mind) and the facts; the history sections are
// always empty.
type memoryJSON struct {
	Version     string `json:"version"`
	LastUpdated string `json:"lastUpdated"`
	User        struct {
		WorkContext     section `json:"workContext"`
		PersonalContext section `json:"personalContext"`
		TopOfMind       section `json:"topOfMind"`
	} `json:"user"`
	History struct {
		RecentMonths       section `json:"recentMonths"`
		EarlierContext     section `json:"earlierContext"`
		LongTermBackground section `json:"longTermBackground"`
	} `json:"history"`
	Facts []factJSON `json:"facts"`
	// Scope is deerflow's: whose memory this is ("api:<user_id>").
	Scope string `json:"scope"`
	// Off: the person switched memory off (/memory off).
	Off bool `json:"off"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func memoryOf(m *store.Memory) memoryJSON {
	j := memoryJSON{Version: "1.0", LastUpdated: stamp(m.Updated), Facts: []factJSON{}, Scope: m.Scope, Off: m.Off}
	j.User.WorkContext = section{m.Work.Text, stamp(m.Work.Updated)}
	j.User.PersonalContext = section{m.Personal.Text, stamp(m.Personal.Updated)}
	j.User.TopOfMind = section{m.TopOfMind.Text, stamp(m.TopOfMind.Updated)}
	for _, f := range m.Facts {
		j.Facts = append(j.Facts, factJSON{ID: f.ID, Content: f.Content, Category: f.Category,
			Confidence: f.Confidence, CreatedAt: stamp(f.Created), Source: f.Source})
	}
	return j
}

// memoryScope is whose memory an API user id names: "api:<user_id>", as
// the api package's runs keep it (runUser in api/input.go: a run with
// user_id U remembers under "api:U"). No user_id means the operator.
func (g *Gateway) memoryScope(r *http.Request) (string, bool) {
	u := strings.TrimSpace(r.URL.Query().Get("user_id"))
	if u == "" {
		u = g.o.Operator
	}
	if len(u) > 128 || strings.ContainsFunc(u, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return "", false
	}
	return "api:" + u, true
}

// memory answers GET /api/memory and /api/memory/export.
func (g *Gateway) memory(w http.ResponseWriter, r *http.Request) {
	scope, ok := g.memoryScope(r)
	if !ok {
		fail(w, http.StatusBadRequest, "user_id must be at most 128 printable characters.")
		return
	}
	m := &store.Memory{Scope: scope}
	if g.o.Store != nil {
		err := g.o.Store.View(func(tx *store.Tx) error {
			var err error
			m, err = tx.Memory(scope)
			return err
		})
		if err != nil {
			g.log.Error("reading memory", "scope", scope, "err", err)
			fail(w, http.StatusInternalServerError, "The memory could not be read.")
			return
		}
	}
	reply(w, http.StatusOK, memoryOf(m))
}

// memoryWrite answers the UI's memory edits (clear, import, facts).
func (g *Gateway) memoryWrite(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		fail(w, http.StatusNotFound, "There is no such memory route: "+r.URL.Path)
		return
	}
	notHere(w, "Memory is changed by the agent and by its owner in chat (/memory forget N, /memory clear, /memory off); it is read-only over HTTP.")
}
