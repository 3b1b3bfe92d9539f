//go:build !linux

package setup

import "io"

// noEcho leaves the echo on where turning it off is not written yet.
func noEcho(io.Reader) (restore func(), hidden bool) { return func() {}, false }
