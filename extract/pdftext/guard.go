package pdftext

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// maxParserFrames bounds the call depth at which the parser may read the
// document. Its legitimate reads happen some 40 frames down; every hop of
// a recursion the library does not bound (an object stream whose
// dictionary refers into itself, say) reads the file again, so a read
// hundreds of frames down means such a recursion, which would otherwise
// grow the stack to Go's 1 GB limit and end the process.
const maxParserFrames = 512

// guardedReader is the io.ReaderAt the parser reads the document
// through. The library cannot be interrupted and has loops that end only
// if the document's references do; every turn of such a loop re-reads the
// file (it keeps no object cache), so refusing reads is what stops it:
// once stop is set (the deadline passed) or the call stack is too deep,
// ReadAt panics, and keeps panicking, with an abortError. The library
// recovers some panics into its own errors or swallows them, so the
// reason is also kept in err for read to report.
type guardedReader struct {
	data []byte
	stop *atomic.Bool

	reads atomic.Int64 // ReadAt calls, for tests to see the parser at work

	mu  sync.Mutex
	err error // the first abort; sticky
}

// abortError is the panic value of an aborted read.
type abortError struct{ err error }

func (a abortError) Error() string { return a.err.Error() }
func (a abortError) Unwrap() error { return a.err }

func (g *guardedReader) ReadAt(p []byte, off int64) (int, error) {
	g.reads.Add(1)
	if err := g.check(); err != nil {
		panic(abortError{err})
	}
	if off < 0 {
		return 0, fmt.Errorf("pdftext: read at negative offset %d", off)
	}
	if off >= int64(len(g.data)) {
		return 0, io.EOF
	}
	n := copy(p, g.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// check returns the reason reads are refused, if they are.
func (g *guardedReader) check() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	if g.stop.Load() {
		g.err = context.DeadlineExceeded
		return g.err
	}
	var pcs [maxParserFrames + 1]uintptr
	if runtime.Callers(0, pcs[:]) > maxParserFrames {
		g.err = fmt.Errorf("%w: the parser recursed over %d calls deep (objects that refer to themselves)", ErrMalformed, maxParserFrames)
		return g.err
	}
	return nil
}

// aborted is the reason reads were refused, or nil.
func (g *guardedReader) aborted() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
