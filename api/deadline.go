package api

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// deadlineBody bounds reading a request body: the connection's read
// deadline is set when the request is served and lifted once the whole
// body has been read. The server's ReadHeaderTimeout covers only the
// headers; without this a client could send them and then trickle or stall
// the body for as long as it liked, holding a handler.
//
// The deadline is lifted at the body's end, not left in place: net/http
// watches the idle connection with a background read after it, and a
// deadline passing there would cancel the request (ending a stream).
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	once sync.Once
}

// newDeadlineBody sets the read deadline of w's connection to at and
// returns body lifting it at EOF. Where the connection has no deadlines
// (a test recorder), body is returned as is.
func newDeadlineBody(w http.ResponseWriter, body io.ReadCloser, at time.Time) io.ReadCloser {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(at); err != nil {
		return body
	}
	return &deadlineBody{ReadCloser: body, rc: rc}
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		// Read in full: lift the deadline. A body left unread or
		// failed keeps it, so discarding the rest stays bounded too.
		b.once.Do(func() { b.rc.SetReadDeadline(time.Time{}) })
	}
	return n, err
}
