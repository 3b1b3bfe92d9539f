package lgwire

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Stream modes a run can be followed in.
const (
	ModeValues        = "values"
	ModeUpdates       = "updates"
	ModeMessages      = "messages"
	ModeMessagesTuple = "messages-tuple"
	ModeCustom        = "custom"
	ModeEvents        = "events"
	ModeDebug         = "debug"
	ModeTasks         = "tasks"
	ModeCheckpoints   = "checkpoints"
)

var knownModes = map[string]bool{
	ModeValues: true, ModeUpdates: true, ModeMessages: true, ModeMessagesTuple: true,
	ModeCustom: true, ModeEvents: true, ModeDebug: true, ModeTasks: true, ModeCheckpoints: true,
}

// Modes is a set of stream modes.
type Modes map[string]bool

// ParseModes reads stream_mode: a string or a list of them; absent means
// values, as in LangGraph. An unknown mode is an error naming it.
func ParseModes(raw json.RawMessage) (Modes, error) {
	var list []string
	if len(raw) == 0 || string(raw) == "null" {
		list = []string{ModeValues}
	} else {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			list = []string{one}
		} else if json.Unmarshal(raw, &list) != nil {
			return nil, fmt.Errorf("stream_mode must be a string or a list of strings")
		}
	}
	m := Modes{}
	for _, s := range list {
		s = strings.TrimSpace(s)
		if !knownModes[s] {
			return nil, fmt.Errorf("stream_mode %q is not one of values, updates, messages, messages-tuple, custom, events, debug, tasks, checkpoints", s)
		}
		m[s] = true
	}
	if len(m) == 0 {
		m[ModeValues] = true
	}
	return m, nil
}

// ModesQuery reads stream_mode from a query (?stream_mode=a&stream_mode=b);
// none means values.
func ModesQuery(vals []string) (Modes, error) {
	if len(vals) == 0 {
		return Modes{ModeValues: true}, nil
	}
	raw, _ := json.Marshal(vals)
	return ParseModes(raw)
}

// List is the set as a sorted-by-name list, for a run's kwargs.
func (m Modes) List() []string {
	out := []string{}
	for _, k := range []string{ModeValues, ModeUpdates, ModeMessages, ModeMessagesTuple, ModeCustom, ModeEvents, ModeDebug, ModeTasks, ModeCheckpoints} {
		if m[k] {
			out = append(out, k)
		}
	}
	return out
}

// messageChunks reports whether the stream sends message chunks, and as
// which event ("messages" for messages-tuple, "messages/partial" for
// messages).
func (m Modes) messageChunks() bool { return m[ModeMessagesTuple] || m[ModeMessages] }
