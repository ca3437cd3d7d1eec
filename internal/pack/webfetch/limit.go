package webfetch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/toolport/toolport/tool"
)

// Defaults of the admission limits, sized for a 2-core machine.
//
// A fetch spends most of its time waiting on the network and then a burst
// of CPU on extraction. Eight concurrent fetches keep both cores busy while
// pages download, and bound the bodies being received to 8 × MaxBodyBytes
// (80 MiB at the 10 MiB default). Extraction is where memory goes: parsing
// a page builds a tree several times its size (a 9 MiB page costs about
// 12 MB held, more at the peak), and two cores cannot extract more than two
// pages at a time anyway, so 24 MiB of page bodies may be in extraction at
// once: two pages at the size cap or dozens of ordinary ones. Past these,
// callers queue for up to 5 s, about what a typical fetch takes, and are
// then told to retry.
const (
	DefaultMaxConcurrent    = 8
	DefaultMaxInFlightBytes = 24 << 20
	DefaultQueueWait        = 5 * time.Second
)

// limiter admits fetches: at most slots at once, and at most budget bytes
// of page bodies held for extraction at once. One limiter belongs to one
// tool instance and is shared by every call of it.
type limiter struct {
	slots chan struct{}
	wait  time.Duration

	mu      sync.Mutex
	budget  int64 // total bytes
	used    int64 // bytes reserved now
	waiters []*byteWaiter
}

type byteWaiter struct {
	n     int64
	ready chan struct{} // closed once the bytes are reserved for it
}

func newLimiter(maxConcurrent int, maxBytes int64, wait time.Duration) *limiter {
	return &limiter{slots: make(chan struct{}, maxConcurrent), budget: maxBytes, wait: wait}
}

// acquire takes a fetch slot, waiting at most l.wait. It returns a
// retryable RATE_LIMIT error when none frees up in time, and the context's
// error when ctx ends first.
func (l *limiter) acquire(ctx context.Context) (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	default:
	}
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, l.busy(fmt.Sprintf("%d fetches are already in progress", cap(l.slots)))
	}
}

// reserve holds n bytes of the budget (all of it, if n is larger, so that
// a page over the budget can still be processed alone), waiting at most
// l.wait. Waiters are served in order, so a large page is not starved by
// a stream of small ones.
func (l *limiter) reserve(ctx context.Context, n int64) (release func(), err error) {
	n = max(min(n, l.budget), 0)
	l.mu.Lock()
	if len(l.waiters) == 0 && l.used+n <= l.budget {
		l.used += n
		l.mu.Unlock()
		return l.releaser(n), nil
	}
	w := &byteWaiter{n: n, ready: make(chan struct{})}
	l.waiters = append(l.waiters, w)
	l.mu.Unlock()

	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	var cause error
	select {
	case <-w.ready:
		return l.releaser(n), nil
	case <-ctx.Done():
		cause = ctx.Err()
	case <-timer.C:
		cause = l.busy(fmt.Sprintf("%d MiB of pages are already being processed", l.budget>>20))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-w.ready: // granted while giving up: hand the bytes back
		l.used -= n
	default:
		for i, x := range l.waiters {
			if x == w {
				l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
				break
			}
		}
	}
	l.grantLocked()
	return nil, cause
}

func (l *limiter) releaser(n int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.used -= n
			l.grantLocked()
			l.mu.Unlock()
		})
	}
}

// grantLocked hands bytes to the waiters at the head of the queue that fit.
func (l *limiter) grantLocked() {
	for len(l.waiters) > 0 && l.used+l.waiters[0].n <= l.budget {
		w := l.waiters[0]
		l.waiters = l.waiters[1:]
		l.used += w.n
		close(w.ready)
	}
}

func (l *limiter) busy(why string) *tool.Error {
	return &tool.Error{Code: tool.CodeRateLimit, Retryable: true, Message: fmt.Sprintf(
		"web_fetch is busy: %s in this process and none finished within %s; try again shortly", why, l.wait)}
}
