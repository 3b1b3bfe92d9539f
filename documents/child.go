package documents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"time"

	"github.com/deerflow/deerflow/documents/doc"
	"golang.org/x/sys/unix"
)

// childEnv marks the process as a conversion child (see RunChild).
const childEnv = "DEERFLOW_DOCUMENTS_CHILD"

// Child limits: the Go heap is soft-capped and the address space hard-
// capped, so one hostile file can't take the machine's memory; pdftotext,
// started by the child, inherits the hard cap.
const (
	childHeap      = 1 << 30
	childAddrSpace = 4 << 30
)

// childFile is the file to convert as the child sees it: its first extra
// descriptor.
const childFile = "/dev/fd/3"

// childRequest is what the parent writes to the child's stdin.
type childRequest struct {
	Format Format
	Path   string
	Limits Limits
}

// childReply is what the child writes to its stdout: the document, or
// the error's sentence and which of the package's errors it wraps.
type childReply struct {
	Doc  *Doc   `json:",omitempty"`
	Err  string `json:",omitempty"`
	Kind string `json:",omitempty"`
}

// kinds names the errors that cross the process boundary.
var kinds = map[string]error{
	"unsupported": ErrUnsupported, "encrypted": ErrEncrypted, "damaged": ErrDamaged,
	"too-large": ErrTooLarge, "timeout": ErrTimeout,
}

// RunChild converts one file and exits when this process was started as
// a conversion child; otherwise it returns at once. Call it first thing
// in main (and in TestMain of tests that run a Converter with Exe set).
func RunChild() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	debug.SetMemoryLimit(childHeap)
	unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: childAddrSpace, Max: childAddrSpace})
	var req childRequest
	var rep childReply
	if err := json.NewDecoder(io.LimitReader(os.Stdin, 1<<20)).Decode(&req); err != nil || converters[req.Format] == nil {
		rep.Err, rep.Kind = "bad conversion request", "unsupported"
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), req.Limits.Timeout)
		st, _ := os.Stat(req.Path)
		var n int64
		if st != nil {
			n = st.Size()
		}
		doc, err := convertHere(ctx, req.Format, req.Path, n, req.Limits)
		cancel()
		rep.Doc = doc
		if err != nil {
			rep.Err = err.Error()
			for k, e := range kinds {
				if errors.Is(err, e) {
					rep.Kind = k
				}
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(&rep)
	os.Exit(0)
}

// child converts in a child process: started with a clean environment
// (no keys or tokens reach the parser), killed at ctx's deadline, its
// reply read up to what lim allows. The file is handed over open, as
// its descriptor 3.
func (c *Converter) child(ctx context.Context, f Format, file *os.File, lim Limits) (*Doc, error) {
	in, _ := json.Marshal(childRequest{Format: f, Path: childFile, Limits: lim})
	cmd := exec.CommandContext(ctx, c.Exe)
	cmd.ExtraFiles = []*os.File{file}
	cmd.Env = []string{childEnv + "=1", "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	cmd.Stdin = bytes.NewReader(in)
	out := &capped{max: 2*lim.MaxOutput + 1<<16}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, describe(f, ErrTimeout)
	}
	var rep childReply
	if err != nil || json.Unmarshal(out.b.Bytes(), &rep) != nil {
		return nil, describe(f, fmt.Errorf("%w (the converter failed on it)", ErrDamaged))
	}
	if rep.Err != "" {
		kind := kinds[rep.Kind]
		if kind == nil {
			kind = ErrDamaged
		}
		return nil, doc.Problem(rep.Err, kind)
	}
	if rep.Doc == nil {
		return nil, describe(f, fmt.Errorf("%w (the converter failed on it)", ErrDamaged))
	}
	return rep.Doc, nil
}

// capped keeps the first max bytes written and drops the rest.
type capped struct {
	b   bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
