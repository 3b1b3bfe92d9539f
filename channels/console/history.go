package console

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// historyMax is how many typed lines the history keeps.
const historyMax = 1000

// history is the line editor's history (term.History), kept in a file
// one line an entry, oldest first. It is capped when read: a file grown
// past max in a session is cut back to the last max lines at the next
// start.
type history struct {
	mu    sync.Mutex
	lines []string // oldest first
	max   int
	f     *os.File // appended to; nil keeps the history in memory
}

// openHistory reads the history in path ("" for none) and opens it for
// appending. A file that cannot be read or written leaves a history in
// memory: losing it is no reason not to chat.
func openHistory(path string, max int) *history {
	h := &history{max: max}
	if path == "" {
		return h
	}
	if data, err := os.ReadFile(path); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" {
				h.lines = append(h.lines, l)
			}
		}
	}
	if len(h.lines) > max {
		h.lines = h.lines[len(h.lines)-max:]
		rewrite(path, h.lines)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err == nil {
		f.Chmod(0o600)
		h.f = f
	}
	return h
}

// rewrite replaces path with lines, through a temporary file.
func rewrite(path string, lines []string) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".chat_history*")
	if err != nil {
		return
	}
	w := bufio.NewWriter(tmp)
	for _, l := range lines {
		w.WriteString(l + "\n")
	}
	err = w.Flush()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// Add implements term.History: blank lines and repeats of the last line
// are not kept.
func (h *history) Add(entry string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if strings.TrimSpace(entry) == "" || (len(h.lines) > 0 && h.lines[len(h.lines)-1] == entry) {
		return
	}
	h.lines = append(h.lines, entry)
	if len(h.lines) > h.max {
		h.lines = h.lines[len(h.lines)-h.max:]
	}
	if h.f != nil {
		h.f.WriteString(entry + "\n")
	}
}

// Len implements term.History.
func (h *history) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.lines)
}

// At implements term.History: 0 is the most recent entry.
func (h *history) At(i int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lines[len(h.lines)-1-i]
}

func (h *history) close() {
	if h.f != nil {
		h.f.Close()
	}
}
