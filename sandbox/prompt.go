package sandbox

import (
	"fmt"
	"strings"
)

// PromptSection is the working-directory part of the system prompt: the
// paths the model has and how to use them. It depends only on the
// Manager's options, so it is stable across turns (good for prompt caching).
func (m *Manager) PromptSection() string {
	var b strings.Builder
	b.WriteString("<working_directory>\n")
	b.WriteString("Each conversation has its own private sandbox. Use only these virtual paths:\n")
	fmt.Fprintf(&b, "- %s: your working directory, and the base of relative paths. Keep scratch files, code and intermediate data here.\n", Workspace)
	fmt.Fprintf(&b, "- %s: files the user sent. Treat them as input and leave them unchanged.\n", Uploads)
	fmt.Fprintf(&b, "- %s: deliverables. Only files here can reach the user: save finished files here, then call present_files with their paths. A file you do not present is not delivered.\n", Outputs)
	if len(m.skills) > 0 {
		fmt.Fprintf(&b, "- %s (read-only): skills, with their instructions and resources.\n", Skills)
	}
	for _, mt := range m.mounts {
		ro := ""
		if mt.ReadOnly {
			ro = " (read-only)"
		}
		fmt.Fprintf(&b, "- %s%s: a directory the operator shared.\n", mt.Path, ro)
	}
	b.WriteString("Working with files:\n")
	b.WriteString("- To change an existing file, prefer str_replace with a unique piece of the old text over rewriting the whole file.\n")
	b.WriteString("- Write large files in chunks: write_file for the first part, then write_file with append=true for each further part.\n")
	b.WriteString("- Refer to files by their full virtual path, such as " + Outputs + "/report.md.\n")
	switch {
	case m.offered == bashOff:
		b.WriteString("- There is no bash tool here: work with the file tools (ls, glob, grep, read_file, write_file, str_replace).\n")
	case m.net == netNone:
		b.WriteString("- bash runs in " + Workspace + " without network access.\n")
	default:
		b.WriteString("- bash runs in " + Workspace + ".\n")
	}
	b.WriteString("</working_directory>")
	return b.String()
}
