package api

import (
	"net/url"
	"path"
)

// fileURL is where the files route serves the presented file at virtual
// path p, "" when it does not: it finds a file by its name in the
// outputs, so only a file it serves has a url (not one presented from a
// folder inside them, which it would take for another). By the name on
// disk: a presented file's display name is cleaned.
func (s *Server) fileURL(threadID, p string) string {
	name := path.Base(p)
	if !plainName(name) || s.o.Files == nil {
		return ""
	}
	if got, err := s.o.Files(threadID, name); err != nil || got.Path != p {
		return ""
	}
	return "/api/threads/" + url.PathEscape(threadID) + "/files/" + url.PathEscape(name)
}
