package agent

import (
	"context"
	"time"

	"github.com/deerflow/deerflow/agent/title"
	"github.com/deerflow/deerflow/store"
)

// title names a thread after its first exchange, in the background: with
// the title model when there is one, else with the start of the first
// message. A title set meanwhile is kept. StopAll cuts the model call
// short (the first message's start is used then) and waits for the rest.
func (a *Agent) title(threadID, user, answer string) {
	a.mu.Lock()
	if a.stopping {
		a.mu.Unlock()
		return
	}
	a.bg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.bg.Done()
		t := title.Fallback(user)
		if m := a.opts.TitleModel; m != nil {
			ctx, cancel := context.WithTimeout(a.bgCtx, 30*time.Second)
			s, err := title.Write(ctx, m.Model, m.ID, user, answer)
			cancel()
			if err == nil && s != "" {
				t = s
			} else if err != nil {
				a.log.Debug("titling a thread with the model failed; using its first message", "thread", threadID, "err", err)
			}
		}
		if t == "" {
			return
		}
		err := a.opts.Store.Update(func(tx *store.Tx) error {
			th, err := tx.Thread(threadID)
			if err != nil || th.Title != "" {
				return err
			}
			th.Title = t
			return tx.PutThread(th)
		})
		if err != nil {
			a.log.Warn("saving a thread's title", "thread", threadID, "err", err)
		}
	}()
}
