// Package turntest has test helpers for the turn package's users.
package turntest

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Clock is a turn.Clock the test moves by hand. Its time stands still
// until Advance; the calls registered with Every run inside Advance, on the
// caller's goroutine, in the order they fall due, so when Advance returns
// every lease renewal and sweep due by then has run (no waiting for a
// background pass). It is safe for concurrent use.
type Clock struct {
	advancing sync.Mutex // one Advance at a time

	mu   sync.Mutex
	now  time.Time
	seq  int
	jobs []*job
}

type job struct {
	seq   int
	every time.Duration
	due   time.Time
	f     func()
	calls sync.WaitGroup
}

// NewClock returns a clock standing at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Every registers f to run every d of the clock's time (d > 0), first at
// Now()+d; stop unregisters it, after waiting for a call under way.
func (c *Clock) Every(d time.Duration, f func()) (stop func()) {
	if d <= 0 {
		panic("turntest: Clock.Every needs a positive period")
	}
	c.mu.Lock()
	c.seq++
	j := &job{seq: c.seq, every: d, due: c.now.Add(d), f: f}
	c.jobs = append(c.jobs, j)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.jobs = slices.DeleteFunc(c.jobs, func(o *job) bool { return o == j })
		c.mu.Unlock()
		j.calls.Wait()
	}
}

// Advance moves the clock on by d, running each registered call as its
// time comes: the clock stands at a call's due time while it runs.
func (c *Clock) Advance(d time.Duration) {
	c.advancing.Lock()
	defer c.advancing.Unlock()
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *job
		for _, j := range c.jobs {
			if !j.due.After(end) && (next == nil || cmp.Or(j.due.Compare(next.due), j.seq-next.seq) < 0) {
				next = j
			}
		}
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		if next.due.After(c.now) {
			c.now = next.due
		}
		next.due = next.due.Add(next.every)
		next.calls.Add(1)
		c.mu.Unlock()
		next.f()
		next.calls.Done()
	}
}
