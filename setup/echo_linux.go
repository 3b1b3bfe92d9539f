package setup

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// noEcho turns off the terminal's echo on r while a secret is typed, when
// r is a terminal; restore turns it back on.
func noEcho(r io.Reader) (restore func(), hidden bool) {
	f, ok := r.(*os.File)
	if !ok {
		return func() {}, false
	}
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}, false // not a terminal
	}
	old := *t
	t.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, unix.TCSETS, t) != nil {
		return func() {}, false
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, &old) }, true
}
