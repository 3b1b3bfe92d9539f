package oauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A login made while deerflow serve holds the database (bbolt locks the
// file) is handed over through a file: `deerflow mcp login` seals the
// tokens with the same key and writes them to HandoffPath; the running
// service's Tokens takes them into the database on the server's next
// connection attempt and removes the file. The file is as safe as the
// database: sealed, 0600, in the data directory.

// HandoffPath is where a login for server waits for the running service.
func HandoffPath(dataDir, server string) string {
	return filepath.Join(dataDir, "mcp-logins", server+".sealed")
}

// writeHandoff seals r for server into path, atomically.
func (v *vault) writeHandoff(path, server string, r *Record) error {
	sealed, err := v.seal(server, r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, sealed, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// takeHandoff moves a login handed over at path into the database and
// returns it; nil, nil when there is none.
func (v *vault) takeHandoff(path, server string) (*Record, error) {
	sealed, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := v.open(server, sealed)
	if err != nil {
		// Set aside, so that it is reported once, not on every request.
		os.Rename(path, path+".rejected")
		return nil, fmt.Errorf("the login handed over in %s (now %[1]s.rejected): %w", path, err)
	}
	if err := v.save(server, r); err != nil {
		return nil, err
	}
	return r, os.Remove(path)
}
