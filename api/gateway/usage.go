package gateway

import (
	"net/http"

	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/store"
)

// usageJSON is DeerFlow's ThreadTokenUsageResponse.
type usageJSON struct {
	ThreadID string                 `json:"thread_id"`
	Total    int64                  `json:"total_tokens"`
	Input    int64                  `json:"total_input_tokens"`
	Output   int64                  `json:"total_output_tokens"`
	Runs     int                    `json:"total_runs"`
	ByModel  map[string]*modelUsage `json:"by_model"`
	ByCaller struct {
		Lead       int64 `json:"lead_agent"`
		Subagent   int64 `json:"subagent"`
		Middleware int64 `json:"middleware"`
	} `json:"by_caller"`
}

// modelUsage is one model's part of a thread's tokens.
type modelUsage struct {
	Tokens int64 `json:"tokens"`
	Runs   int   `json:"runs"`
}

// tokenUsage answers GET /api/threads/{id}/token-usage: the thread's
// tokens in total (its record's count, which outlives the run list) and
// by model over the runs it lists. deerflow counts a run's tokens as the
// lead agent's.
func (g *Gateway) tokenUsage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	out := usageJSON{ThreadID: id, ByModel: map[string]*modelUsage{}}
	ok := g.apiThread(w, id, func(tx *store.Tx, t *store.Thread) error {
		out.Input, out.Output = t.PromptTokens, t.CompletionTokens
		for _, e := range lgwire.RunEntries(tx, id) {
			out.Runs++
			rec, err := tx.Run(e.ID)
			if err != nil || rec.ThreadID != id || rec.Model == "" {
				continue // waiting, dropped, or from before models were recorded
			}
			m := out.ByModel[rec.Model]
			if m == nil {
				m = &modelUsage{}
				out.ByModel[rec.Model] = m
			}
			m.Tokens += int64(rec.PromptTokens + rec.CompletionTokens)
			m.Runs++
		}
		return nil
	})
	if ok {
		out.Total = out.Input + out.Output
		out.ByCaller.Lead = out.Total
		reply(w, http.StatusOK, out)
	}
}
