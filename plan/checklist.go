package plan

import (
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/event"
)

// Checklist is items as the chat shows them, one line each: ☐ pending,
// ◐ in progress, ☑ completed.
func Checklist(items []event.Todo) string {
	var sb strings.Builder
	for i, it := range items {
		if i > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(mark(it.Status) + " " + it.Content)
	}
	return sb.String()
}

// Panel is the checklist message: a heading with the progress, then the
// items.
func Panel(items []event.Todo) string {
	if len(items) == 0 {
		return "Plan: (empty)"
	}
	return "Plan · " + progress(items) + "\n" + Checklist(items)
}

func progress(items []event.Todo) string {
	return strconv.Itoa(done(items)) + "/" + strconv.Itoa(len(items)) + " done"
}

func mark(status string) string {
	switch status {
	case event.TodoCompleted:
		return "☑"
	case event.TodoInProgress:
		return "◐"
	}
	return "☐"
}

// done counts the completed items.
func done(items []event.Todo) int {
	n := 0
	for _, it := range items {
		if it.Status == event.TodoCompleted {
			n++
		}
	}
	return n
}
