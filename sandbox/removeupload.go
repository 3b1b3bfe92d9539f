package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
)

// RemoveUpload deletes the upload vpath (a file directly in the thread's
// uploads) and its Markdown version (vpath + ConvertedSuffix), if there is
// one. A link is removed itself, never followed; a directory is refused.
// The error wraps fs.ErrNotExist when there is no such upload.
func (m *Manager) RemoveUpload(threadID, vpath string) error {
	name, err := uploadName(vpath)
	if err != nil {
		return err
	}
	if name == "." || name == ".." {
		return fmt.Errorf("sandbox: %q is not a file in %s", vpath, Uploads)
	}
	t, err := m.thread(threadID)
	if err != nil {
		return err
	}
	root, err := openSub(t.userData, "uploads")
	if err != nil {
		return fmt.Errorf("sandbox: remove upload: %w", err)
	}
	defer root.Close()
	st, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sandbox: no upload %s: %w", vpath, fs.ErrNotExist)
	}
	if err != nil || st.IsDir() {
		return fmt.Errorf("sandbox: %s is not a file", vpath)
	}
	if err := root.Remove(name); err != nil {
		return fmt.Errorf("sandbox: remove upload %s: %w", vpath, err)
	}
	if st, err := root.Lstat(name + ConvertedSuffix); err == nil && !st.IsDir() {
		root.Remove(name + ConvertedSuffix)
	}
	return nil
}
