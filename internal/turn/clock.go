package turn

import (
	"sync"
	"time"
)

// Clock is the time a [Manager]'s leases follow: the lease ends it writes
// and compares (Now), and the schedule of its lease renewal and sweeper
// (Every). The default is the system clock; tests pass one they move by
// hand (turntest.Clock), so that a lease lapses when the test says so, not
// after waiting real time. Bounds on waits (a follower's re-read of the
// log, a finishing turn's release, the start gate) stay real time: they
// are latency backstops, not lease arithmetic.
type Clock interface {
	Now() time.Time
	// Every calls f every d, one call at a time, until stop is called;
	// stop waits for a call under way to return and must not be called
	// from f.
	Every(d time.Duration, f func()) (stop func())
}

// systemClock is the default [Clock].
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Every(d time.Duration, f func()) func() {
	tick := time.NewTicker(d)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			select {
			case <-quit: // stopped while the tick was pending
				return
			default:
			}
			f()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			tick.Stop()
			close(quit)
		})
		<-done
	}
}
