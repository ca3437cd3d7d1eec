package turn

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A running turn waits while a turn is starting: until it started, at most
// maxWait, or until its context ends; a gate turned off never waits.
func TestGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		waited := func(g *gate, ctx context.Context) time.Duration {
			start := time.Now()
			g.wait(ctx)
			return time.Since(start)
		}
		g := newGate(time.Hour)
		if d := waited(g, context.Background()); d != 0 {
			t.Fatalf("wait with nothing starting took %v", d)
		}

		// A running turn waits while one starts, and goes on once it started.
		done := g.enter()
		other := g.enter()
		other()
		other() // counted once however often called
		released := make(chan time.Duration, 1)
		go func() { released <- waited(g, context.Background()) }()
		time.Sleep(time.Minute) // fake time: the waiter is durably blocked
		synctest.Wait()
		select {
		case d := <-released:
			t.Fatalf("wait returned after %v while a turn was starting", d)
		default:
		}
		done()
		synctest.Wait()
		select {
		case d := <-released:
			if d != time.Minute {
				t.Errorf("wait took %v, want the minute until the starting turn started", d)
			}
		default:
			t.Fatal("wait did not return once the starting turn started")
		}

		// The wait is bounded, and ends with its context.
		short := newGate(20 * time.Millisecond)
		stuck := short.enter()
		defer stuck()
		if d := waited(short, context.Background()); d != 20*time.Millisecond {
			t.Errorf("bounded wait took %v, want 20ms", d)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		busy := g.enter()
		defer busy()
		if d := waited(g, ctx); d != 0 {
			t.Errorf("wait with a canceled context took %v", d)
		}
		off := newGate(-1)
		held := off.enter()
		defer held()
		if d := waited(off, context.Background()); d != 0 {
			t.Errorf("a gate turned off waited %v", d)
		}
	})
}
