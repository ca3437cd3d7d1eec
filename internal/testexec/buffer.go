package testexec

import (
	"bytes"
	"context"
	"sync"
)

// Buffer is a bytes.Buffer safe for a running process or server goroutine to
// write while the test reads it, and to wait on without polling.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed at the next write; nil when nobody waits
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return n, err
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Next returns what was written so far and a channel closed at the next
// write, for a test that waits for output alongside other events.
func (s *Buffer) Next() (string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.b.String(), s.changed
}

// Await blocks until match accepts what was written so far, returning it, or
// until ctx ends, returning what there was and ctx's error.
func (s *Buffer) Await(ctx context.Context, match func(string) bool) (string, error) {
	for {
		got, changed := s.Next()
		if match(got) {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-changed:
		}
	}
}
