// Package httpclienttest measures how HTTP clients use connections, for tests
// that check a client keeps its connections for the next request.
package httpclienttest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a loopback test server that counts the connections opened to it.
type Server struct {
	*httptest.Server
	opened atomic.Int64
}

// NewServer starts a server on 127.0.0.1 running h, closed when the test ends.
func NewServer(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s := &Server{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.opened.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// Opened returns how many connections clients have opened so far.
func (s *Server) Opened() int64 { return s.opened.Load() }

// Burst makes rounds bursts of workers concurrent calls, each burst after
// the previous one has ended, as a server sees load arrive in waves, and
// fails the test on an error. Between bursts every connection is idle at
// once, which is when a small idle pool closes them.
func Burst(t testing.TB, workers, rounds int, call func() error) {
	t.Helper()
	for range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Go(func() {
				if err := call(); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

// CheckReuse runs a [Burst] of workers×rounds calls against s and fails the
// test when they opened more than workers+slack connections: a client whose
// pool keeps fewer idle connections than its concurrency opens new ones on
// nearly every call.
func CheckReuse(t testing.TB, s *Server, workers, rounds, slack int, call func() error) {
	t.Helper()
	before := s.Opened()
	Burst(t, workers, rounds, call)
	if opened := s.Opened() - before; opened > int64(workers+slack) {
		t.Errorf("%d concurrent workers made %d calls over %d new connections, want at most %d",
			workers, workers*rounds, opened, workers+slack)
	}
}
