package gateway

import (
	"errors"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/store"
)

// UploadsNote is the note telling the model of the files a run's message
// came with (api.Options.UploadsNote): each of paths that is one of the
// thread's uploads (exactly: any other path is left out), with its
// Markdown version where there is one. "" when none is.
func (g *Gateway) UploadsNote(threadID string, paths []string) string {
	if g.o.Files == nil {
		return ""
	}
	list, err := g.o.Files.ListUploads(threadID)
	if err != nil {
		return ""
	}
	want := map[string]bool{}
	for _, p := range paths {
		if p = path.Clean(p); path.Dir(p) == sandbox.Uploads {
			want[p] = true
		}
	}
	var lines []string
	for _, u := range list {
		if !want[u.Path] {
			continue
		}
		delete(want, u.Path)
		line := u.Path
		if u.Markdown != "" {
			line += " → Markdown: " + u.Markdown
		}
		lines = append(lines, line)
	}
	return sandbox.UploadsNote(lines)
}

// runMessage is DeerFlow's RunMessage: one message of a thread with its
// thread-wide seq.
type runMessage struct {
	RunID    string          `json:"run_id"`
	Seq      uint64          `json:"seq"`
	Content  lgwire.Message  `json:"content"`
	Metadata map[string]any  `json:"metadata"`
	Created  time.Time       `json:"created_at"`
	Feedback *map[string]any `json:"feedback"`
}

// messagesPage answers GET /api/threads/{id}/messages/page[?before_seq=N
// &limit=L]: the newest L (default 50, at most 200) messages before seq N
// (all of them without it), oldest first, as DeerFlow's gateway pages a
// thread's history backwards; next_before_seq is the page's first seq
// when there are older ones.
func (g *Gateway) messagesPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, before := 50, uint64(0)
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			fail(w, http.StatusUnprocessableEntity, "limit must be a number from 1 to 200.")
			return
		}
		limit = n
	}
	if v := q.Get("before_seq"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < 1 {
			fail(w, http.StatusUnprocessableEntity, "before_seq must be a number of at least 1.")
			return
		}
		before = n
	}
	msgs, ok := g.threadMessages(w, r.PathValue("id"))
	if !ok {
		return
	}
	var rows []runMessage
	lgwire.EachFromStore(msgs, func(m *store.Message, c lgwire.Message) {
		if before == 0 || m.Seq < before {
			rows = append(rows, runMessage{RunID: m.RunID, Seq: m.Seq, Content: c,
				Metadata: map[string]any{"caller": lgwire.LeadAgent}, Created: m.Time})
		}
	})
	page := struct {
		Data    []runMessage `json:"data"`
		HasMore bool         `json:"has_more"`
		Next    *uint64      `json:"next_before_seq"`
	}{Data: rows, HasMore: len(rows) > limit}
	if page.HasMore {
		page.Data = rows[len(rows)-limit:]
		page.Next = &page.Data[0].Seq
	}
	if page.Data == nil {
		page.Data = []runMessage{}
	}
	reply(w, http.StatusOK, page)
}

// threadMessages are API thread id's stored messages; false after
// answering that there is no such thread (or no store).
func (g *Gateway) threadMessages(w http.ResponseWriter, id string) ([]*store.Message, bool) {
	var msgs []*store.Message
	ok := g.apiThread(w, id, func(tx *store.Tx, _ *store.Thread) (err error) {
		msgs, err = tx.Messages(id, 0)
		return err
	})
	return msgs, ok
}

// apiThread runs fn on API thread id in a read transaction; false after
// answering an error (404 for a thread that is not the API's).
func (g *Gateway) apiThread(w http.ResponseWriter, id string, fn func(*store.Tx, *store.Thread) error) bool {
	if g.o.Store == nil {
		fail(w, http.StatusServiceUnavailable, "Threads are not available here.")
		return false
	}
	err := g.o.Store.View(func(tx *store.Tx) error {
		t, err := tx.Thread(id)
		if err == nil && t.ChatKey != lgwire.ChatKey(id) {
			err = store.ErrNotFound
		}
		if err != nil {
			return err
		}
		return fn(tx, t)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		fail(w, http.StatusNotFound, "Thread \""+id+"\" not found.")
	case err != nil:
		g.log.Error("gateway: reading a thread", "thread", id, "err", err)
		fail(w, http.StatusInternalServerError, "The thread could not be read; try again.")
	}
	return err == nil
}
