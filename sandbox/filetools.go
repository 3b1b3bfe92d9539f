package sandbox

import (
	"context"

	"github.com/deerflow/deerflow/sandbox/files"
	"github.com/deerflow/deerflow/tools"
)

// The file tools: this file gives them their names and descriptions and
// resolves their paths in the thread of the call; package files does the
// work.

func (m *Manager) readFileTool() tools.Tool {
	return tool(m, "read_file",
		"Read a text file. Returns its content, or the lines from start_line to end_line (1-based, inclusive). Long output is cut to fit the context window (at most 50,000 characters), with a note giving the lines to read next.",
		func(ctx context.Context, t *thread, in files.ReadArgs) (string, error) {
			l, err := t.at(in.Path)
			if err != nil {
				return "", err
			}
			return files.Read(l, in.StartLine, in.EndLine)
		})
}

func (m *Manager) writeFileTool() tools.Tool {
	return tool(m, "write_file",
		"Create or overwrite a text file, or append to it. To change part of an existing file, prefer str_replace. Write large files in chunks: the first call without append, the rest with append=true.",
		func(ctx context.Context, t *thread, in files.WriteArgs) (string, error) {
			l, err := t.writableAt(in.Path)
			if err != nil {
				return "", err
			}
			return files.Write(&m.locks, l, in.Content, in.Append)
		})
}

func (m *Manager) strReplaceTool() tools.Tool {
	return tool(m, "str_replace",
		"Edit a text file by replacing an exact piece of text (old_str) with new text (new_str). Prefer this over rewriting a whole file. old_str must match exactly once unless replace_all is true; include a few surrounding lines to make it unique.",
		func(ctx context.Context, t *thread, in files.ReplaceArgs) (string, error) {
			l, err := t.writableAt(in.Path)
			if err != nil {
				return "", err
			}
			return files.Replace(&m.locks, l, in.OldStr, in.NewStr, in.ReplaceAll)
		})
}

func (m *Manager) lsTool() tools.Tool {
	return tool(m, "ls",
		"List a directory as a tree two levels deep. Directories end with '/', files show their size.",
		func(ctx context.Context, t *thread, in files.LsArgs) (string, error) {
			l, err := t.dirAt(in.Path)
			if err != nil {
				return "", err
			}
			return files.Ls(l, UserData, Skills)
		})
}

func (m *Manager) globTool() tools.Tool {
	return tool(m, "glob",
		"Find files whose paths match a glob pattern. Returns virtual paths, one per line.",
		func(ctx context.Context, t *thread, in files.GlobArgs) (string, error) {
			return files.Glob(ctx, in, t.dirAt)
		})
}

func (m *Manager) grepTool() tools.Tool {
	return tool(m, "grep",
		"Search file contents for a pattern. Returns matching lines as path:line: text. Binary files, files over 16 MB and .git and node_modules directories are skipped.",
		func(ctx context.Context, t *thread, in files.GrepArgs) (string, error) {
			return files.Grep(ctx, in, t.dirAt)
		})
}
