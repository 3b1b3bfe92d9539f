package documents

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/deerflow/deerflow/documents/doc"
)

// Converter converts uploads, in a child process when Exe is set.
//
// A child process is how untrusted files are parsed safely: a parser that
// loops or balloons on a hostile file is killed at the deadline with
// everything it allocated, and nothing it does can take the service down.
// In this process the deadline still holds for the caller, but a converter
// that ignores it keeps running in the background until it ends.
type Converter struct {
	Limits Limits
	// Exe is the program started as the child (normally this binary, see
	// RunChild); "" converts in this process.
	Exe string
}

// Convert converts the file at path; see ConvertFile.
func (c *Converter) Convert(ctx context.Context, path, name string) (*Doc, error) {
	f := Detect(name)
	if converters[f] == nil {
		return nil, ErrUnsupported
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, describe(f, fmt.Errorf("%w (it could not be read)", ErrDamaged))
	}
	defer file.Close()
	return c.ConvertFile(ctx, file, name)
}

// ConvertFile converts the open file file; name (the file's name as the
// person sent it) says its format. Errors wrap ErrUnsupported,
// ErrEncrypted, ErrDamaged, ErrTooLarge or ErrTimeout, and read as a
// sentence about the file ("PDF: it is password-protected"). The
// converter reads the file through its descriptor, never by a name that
// could be swapped for a link meanwhile.
func (c *Converter) ConvertFile(ctx context.Context, file *os.File, name string) (*Doc, error) {
	f := Detect(name)
	if converters[f] == nil {
		return nil, ErrUnsupported
	}
	lim := c.Limits.WithDefaults()
	st, err := file.Stat()
	switch {
	case err != nil || !st.Mode().IsRegular():
		return nil, describe(f, fmt.Errorf("%w (it could not be read)", ErrDamaged))
	case st.Size() == 0:
		return nil, describe(f, doc.Problem("it is empty", ErrDamaged))
	case st.Size() > lim.MaxInput:
		return nil, describe(f, fmt.Errorf("%w (%s; the limit is %s)", ErrTooLarge, doc.Size(st.Size()), doc.Size(lim.MaxInput)))
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	if c.Exe != "" {
		return c.child(ctx, f, file, lim)
	}
	return convertHere(ctx, f, fmt.Sprintf("/proc/self/fd/%d", file.Fd()), st.Size(), lim)
}

// convertHere runs f's converter in this process, returning at the
// deadline even when the converter does not.
func convertHere(ctx context.Context, f Format, path string, n int64, lim Limits) (*Doc, error) {
	type result struct {
		doc *Doc
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("%w (the converter failed on it)", ErrDamaged)}
			}
			done <- r
		}()
		r.doc, r.err = converters[f](ctx, path, n, lim)
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, describe(f, timeoutErr(ctx, r.err))
		}
		r.doc.Format = f
		return r.doc, nil
	case <-ctx.Done():
		return nil, describe(f, timeoutErr(ctx, ctx.Err()))
	}
}

// timeoutErr turns a deadline into ErrTimeout, keeping other errors.
func timeoutErr(ctx context.Context, err error) error {
	if errors.Is(err, ErrTimeout) {
		return err
	}
	if ctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		return ErrTimeout
	}
	return err
}
