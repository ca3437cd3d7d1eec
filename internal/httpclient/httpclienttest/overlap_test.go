package httpclienttest

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Overlap answers nobody until n requests are in it, then all of them, and
// starts counting again for the next n; one that waits in vain is answered
// after the guard, not never.
func TestOverlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int32
		h := Overlap(3, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
		serve := func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) }
		for range 2 {
			go serve()
		}
		synctest.Wait()
		if n := served.Load(); n != 0 {
			t.Fatalf("%d served with 2 of 3 in", n)
		}
		go serve()
		synctest.Wait()
		if n := served.Load(); n != 3 {
			t.Fatalf("%d served with 3 of 3 in, want all 3", n)
		}
		start := time.Now()
		serve() // alone in the next round
		if n, waited := served.Load(), time.Since(start); n != 4 || waited != overlapGuard {
			t.Fatalf("a lone request: %d served after %v, want it served after the %v guard", n, waited, overlapGuard)
		}
	})
}
