package memory

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/store"
)

// clearWindow is how long a /memory clear waits for its confirmation.
const clearWindow = 5 * time.Minute

// Command answers "/memory [args]" from userID in chatKey with the text to
// reply: show, forget N, clear (then clear confirm), off, on. In a group
// (others read the reply) a person's memory is never shown, only changed.
func (m *Manager) Command(userID, chatKey string, group bool, args string) string {
	scope := m.ScopeOf(userID, chatKey)
	whose, yours := "you", "your"
	private := group
	if m.opts.Scope == "chat" {
		whose, yours, private = "this chat", "this chat's", false
	}
	fields := strings.Fields(strings.ToLower(args))
	var reply string
	err := m.opts.Store.Update(func(tx *store.Tx) error {
		mem, err := tx.Memory(scope)
		if err != nil {
			return err
		}
		switch {
		case len(fields) == 0 && private:
			reply = fmt.Sprintf("What I remember about you is yours alone, so I don't show it here: send /memory in a direct message to me. (%d facts stored.)", len(mem.Facts))
			return nil
		case len(fields) == 0:
			reply = m.show(mem, whose)
			return nil
		case fields[0] == "forget" && len(fields) == 2:
			reply, err = m.forgetFact(tx, mem, fields[1], private)
			return err
		case fields[0] == "clear" && len(fields) == 1:
			m.mu.Lock()
			m.clears[scope] = m.opts.Now()
			m.mu.Unlock()
			reply = fmt.Sprintf("This deletes everything I remember about %s (%d facts and the summaries), for good. Send /memory clear confirm within 5 minutes to go ahead.", whose, len(mem.Facts))
			return nil
		case fields[0] == "clear" && len(fields) == 2 && (fields[1] == "confirm" || fields[1] == "yes"):
			reply, err = m.clearMemory(tx, mem, scope, whose)
			return err
		case fields[0] == "off" && len(fields) == 1:
			mem.Off, mem.Updated = true, m.opts.Now()
			reply = fmt.Sprintf("Memory is off for %s: I won't use what I remember or learn anything new (what is stored stays until /memory clear). /memory on switches it back on.", whose)
			if err := tx.DeleteExchanges(scope, nil); err != nil {
				return err
			}
			return tx.PutMemory(mem)
		case fields[0] == "on" && len(fields) == 1:
			mem.Off, mem.Updated = false, m.opts.Now()
			reply = fmt.Sprintf("Memory is on for %s again: I'll use it and keep it up to date.", whose)
			return tx.PutMemory(mem)
		}
		reply = fmt.Sprintf("Usage: /memory shows %s memory · /memory forget N · /memory clear · /memory off · /memory on", yours)
		return nil
	})
	if err != nil {
		m.log.Error("memory command", "scope", scope, "err", err)
		return "I couldn't read or change the memory just now; please try again."
	}
	m.forget(scope)
	return reply
}

// forgetFact deletes fact number arg ("3" or "#3") of mem; in private,
// the reply does not repeat it.
func (m *Manager) forgetFact(tx *store.Tx, mem *store.Memory, arg string, private bool) (string, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(arg, "#"))
	if err != nil || n < 1 || n > len(mem.Facts) {
		return fmt.Sprintf("There is no fact %s. /memory lists them with their numbers (1 to %d).", arg, len(mem.Facts)), nil
	}
	f := mem.Facts[n-1]
	mem.Facts = append(mem.Facts[:n-1], mem.Facts[n:]...)
	mem.Updated = m.opts.Now()
	reply := fmt.Sprintf("Forgotten: %s", f.Content)
	if private {
		reply = fmt.Sprintf("Forgotten: fact %d.", n)
	}
	return reply, tx.PutMemory(mem)
}

// clearMemory deletes the memory of scope if /memory clear was asked for
// within clearWindow.
func (m *Manager) clearMemory(tx *store.Tx, mem *store.Memory, scope, whose string) (string, error) {
	m.mu.Lock()
	asked, ok := m.clears[scope]
	delete(m.clears, scope)
	m.mu.Unlock()
	if !ok || m.opts.Now().Sub(asked) > clearWindow {
		return "Send /memory clear first; then confirm within 5 minutes.", nil
	}
	off := mem.Off
	if err := tx.DeleteMemory(scope); err != nil {
		return "", err
	}
	if off { // clearing does not switch memory back on
		if err := tx.PutMemory(&store.Memory{Scope: scope, Off: true, Updated: m.opts.Now()}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Done: I have forgotten everything I remembered about %s.", whose), nil
}

func (m *Manager) show(mem *store.Memory, whose string) string {
	empty := mem.Work.Text == "" && mem.Personal.Text == "" && mem.TopOfMind.Text == "" && len(mem.Facts) == 0
	switch {
	case mem.Off && empty:
		return "Memory is off for " + whose + ", and nothing is stored. /memory on switches it on."
	case mem.Off:
		return listing(mem, whose) + "\n\nMemory is off: none of this is used now. /memory on switches it back on."
	case empty:
		return fmt.Sprintf("I don't remember anything about %s yet. I learn from our conversations a little after they go quiet.", whose)
	}
	return listing(mem, whose)
}
