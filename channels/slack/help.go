package slack

import (
	"strings"

	"github.com/deerflow/deerflow/bus"
)

// helpLine is the line of the router's command list that shows it is
// one (help text, or an unknown command's answer).
var helpLine = func() string {
	for _, c := range bus.Commands {
		if c.Name == "help" {
			return "/help — " + c.Help
		}
	}
	return "/help — "
}()

// slackHelp rewrites the router's command list for Slack, where Slack
// itself takes a typed "/new": each "/name — …" line of a command becomes
// "/deerflow name — …", and a closing line says how to address one
// thread. Any other text is returned as it is.
func (c *Channel) slackHelp(text string) string {
	if !strings.Contains(text, helpLine) {
		return text
	}
	commands := map[string]bool{}
	for _, cmd := range bus.Commands {
		commands[cmd.Name] = true
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		word, rest, ok := strings.Cut(l, " — ")
		if name, slash := strings.CutPrefix(word, "/"); ok && slash && commands[name] {
			lines[i] = "/deerflow " + name + " — " + rest
		}
	}
	name := c.botName
	if name == "" {
		name = "deerflow"
	}
	return strings.Join(lines, "\n") + "\n\nOn Slack, type `/deerflow <command>` anywhere: it acts on your latest " +
		"conversation in that channel or DM. To act on one thread, mention me with the command in it: `@" +
		name + " /stop`, `@" + name + " /new`."
}
