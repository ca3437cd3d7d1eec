package httpclienttest

import (
	"net/http"
	"sync"
	"time"
)

// overlapGuard bounds how long Overlap holds a request when fewer than n
// arrive (a client that caps its connections below n): a hang guard, not a
// timing.
const overlapGuard = 10 * time.Second

// Overlap returns a handler that holds each request until n are in it at
// once, then runs h for all of them, and so on for the next n: a [Burst] of n
// workers then has every call in flight together, where a pause in the
// handler would only make that likely.
func Overlap(n int, h http.Handler) http.Handler {
	var (
		mu  sync.Mutex
		in  int
		all = make(chan struct{})
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gate := all
		if in++; in == n {
			close(all)
			in, all = 0, make(chan struct{})
		}
		mu.Unlock()
		t := time.NewTimer(overlapGuard)
		defer t.Stop()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		h.ServeHTTP(w, r)
	})
}
