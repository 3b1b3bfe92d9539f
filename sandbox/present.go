package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/tools"
)

// PresentedFile is a file the model asked to deliver to the user.
type PresentedFile struct {
	VirtualPath string // e.g. /mnt/user-data/outputs/report.pdf; what the model knows
	HostPath    string // for the channel that uploads it; never shown to the model
	Name        string // base name as shown in the chat: without control or bidi characters
	Size        int64

	userData string // host user-data directory of the thread
	rel      string // path below its outputs
}

// Open opens the file for upload without following symlinks out of the
// thread's outputs directory, even if the sandbox swapped the file for a
// link after it was presented. Channels should use it instead of
// os.Open(HostPath).
func (f PresentedFile) Open() (*os.File, error) {
	if f.userData == "" || f.rel == "" {
		return nil, errors.New("sandbox: presented file has no outputs root")
	}
	r, err := openSub(f.userData, "outputs")
	if err != nil {
		return nil, fmt.Errorf("sandbox: open outputs: %w", err)
	}
	defer r.Close()
	file, err := openRead(r, f.rel)
	if err != nil {
		return nil, fmt.Errorf("sandbox: open %s: %w", f.VirtualPath, err)
	}
	if st, err := file.Stat(); err != nil || !st.Mode().IsRegular() {
		file.Close()
		return nil, fmt.Errorf("sandbox: %s is no longer a regular file", f.VirtualPath)
	}
	return file, nil
}

type presentArgs struct {
	Filepaths []string `json:"filepaths" desc:"Virtual paths of the files to deliver, each under /mnt/user-data/outputs."`
}

func (m *Manager) presentFilesTool() tools.Tool {
	return tool(m, "present_files",
		"Deliver finished files to the user in the chat. Only files under /mnt/user-data/outputs can be presented: save or copy deliverables there first. Call it once with every file to share.",
		func(ctx context.Context, t *thread, in presentArgs) (string, error) {
			files, err := t.present(in.Filepaths)
			if err != nil {
				return "", err
			}
			// The event's files open with PresentedFile.Open.
			out := make([]event.File, len(files))
			for i, f := range files {
				out[i] = event.File{Name: f.Name, Path: f.VirtualPath, Size: f.Size,
					Open: func() (io.ReadCloser, error) { return f.Open() }}
			}
			tools.Emit(ctx, event.FilesPresented{Files: out})
			var b strings.Builder
			fmt.Fprintf(&b, "Presented %d file(s) to the user:", len(files))
			for _, f := range files {
				fmt.Fprintf(&b, "\n- %s", f.VirtualPath)
				if f.Name != path.Base(f.VirtualPath) {
					fmt.Fprintf(&b, " (shown to the user as %q: control and text-direction characters removed)", f.Name)
				}
			}
			return b.String(), nil
		})
}

// present checks that every path is a regular file inside outputs (opened
// through an os.Root on outputs itself, so no symlink leads elsewhere) and
// describes them. Nothing is presented unless all are valid.
func (t *thread) present(paths []string) ([]PresentedFile, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("filepaths is empty; list the files under %s to deliver", Outputs)
	}
	outputs := filepath.Join(t.userData, "outputs")
	r, err := openSub(t.userData, "outputs")
	if err != nil {
		return nil, fmt.Errorf("%s is not available: it must be a directory (not a link)", Outputs)
	}
	defer r.Close()
	var (
		files    []PresentedFile
		problems []string
		seen     = map[string]bool{}
	)
	for _, p := range paths {
		l, err := t.resolve(p)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if !within(l.path, Outputs) || l.path == Outputs {
			problems = append(problems, fmt.Sprintf("%s is not under %s; copy it there first (e.g. with bash: cp %s %s/)", l.path, Outputs, l.path, Outputs))
			continue
		}
		if seen[l.path] {
			continue
		}
		seen[l.path] = true
		rel := strings.TrimPrefix(l.path, Outputs+"/")
		ol := loc{area: area{virtual: Outputs, host: outputs}, rel: rel, path: l.path}
		f, err := openRead(r, rel)
		if err != nil {
			problems = append(problems, ol.fail(err).Error())
			continue
		}
		st, err := f.Stat()
		f.Close()
		switch {
		case err != nil:
			problems = append(problems, ol.fail(err).Error())
		case st.IsDir():
			problems = append(problems, fmt.Sprintf("%s is a directory; present the files in it one by one", l.path))
		case !st.Mode().IsRegular():
			problems = append(problems, fmt.Sprintf("%s is not a regular file", l.path))
		default:
			files = append(files, PresentedFile{
				VirtualPath: l.path, HostPath: filepath.Join(outputs, filepath.FromSlash(rel)),
				Name: displayName(l.path), Size: st.Size(), userData: t.userData, rel: rel,
			})
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("no files were presented: %s", strings.Join(problems, "; "))
	}
	return files, nil
}

// Reopen presents again a file presented earlier in thread id (virtual
// path p under outputs), for a delivery retried after a restart. It is
// checked like the first time.
func (m *Manager) Reopen(id, p string) (event.File, error) {
	t, err := m.thread(id)
	if err != nil {
		return event.File{}, err
	}
	files, err := t.present([]string{p})
	if err != nil {
		return event.File{}, err
	}
	f := files[0]
	return event.File{Name: f.Name, Path: f.VirtualPath, Size: f.Size,
		Open: func() (io.ReadCloser, error) { return f.Open() }}, nil
}

// displayName is the name a presented file reaches the chat with: its base
// name cleaned like an upload's, so that control and bidirectional
// characters (a right-to-left override turning "gnp.exe" into what reads
// as "exe.png") cannot disguise it as another file.
func displayName(virtual string) string {
	return sanitizeName(path.Base(virtual))
}
