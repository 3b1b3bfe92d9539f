package agents

import (
	"fmt"
	"io"
	"strings"
)

// CLIUsage is the usage of `deerflow agents`.
const CLIUsage = "usage: deerflow agents [--config FILE] [list | show NAME | delete NAME]"

// CLI runs `deerflow agents`: list every agent, show one, or delete one
// created in a chat. It returns the process exit code.
func (r *Registry) CLI(args []string, stdout, stderr io.Writer) int {
	verb, name := "list", ""
	if len(args) > 0 {
		verb = args[0]
	}
	if len(args) > 1 {
		name = args[1]
	}
	switch {
	case verb == "list" && len(args) <= 1:
		defs, err := r.List()
		if err != nil {
			fmt.Fprintf(stderr, "deerflow agents: %v\n", err)
			return 1
		}
		if len(defs) == 0 {
			fmt.Fprintln(stdout, "No agents: the built-in one answers everywhere.")
		}
		for _, d := range defs {
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", d.Name, origin(d), d.Description)
		}
		return 0
	case verb == "show" && len(args) == 2:
		d, ok := r.Get(name)
		if !ok {
			fmt.Fprintf(stderr, "deerflow agents: there is no agent called %q\n", name)
			return 1
		}
		show(stdout, d)
		return 0
	case verb == "delete" && len(args) == 2:
		if err := r.Delete(name); err != nil {
			fmt.Fprintf(stderr, "deerflow agents: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "Deleted %s; its conversations go back to their chat's or bot's agent.\n", name)
		return 0
	}
	fmt.Fprintln(stderr, CLIUsage)
	return 2
}

func origin(d Def) string {
	if d.FromChat() {
		return "created in a chat by " + d.CreatedBy + " on " + d.Created.Format("2006-01-02")
	}
	return "config"
}

// show prints one agent, a field a line.
func show(w io.Writer, d Def) {
	or := func(list []string) string {
		if len(list) == 0 {
			return "all"
		}
		return strings.Join(list, ", ")
	}
	model := d.Model
	if model == "" {
		model = "the default model"
	}
	fmt.Fprintf(w, "name: %s\nfrom: %s\ndescription: %s\nmodel: %s\ntools: %s\nskills: %s\nmcp servers: %s\nmemory: %s\nsoul:\n%s\n",
		d.Name, origin(d), d.Description, model, or(d.Tools), or(d.Skills), or(d.MCPServers), d.Memory, d.Soul)
}
