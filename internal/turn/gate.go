package turn

import (
	"context"
	"sync"
	"time"
)

// gate gives turns that are starting precedence over turns that are
// running. A message's first event (the turn claimed, the user message and
// message_start durable) is a few writes; the rest of a turn is model
// streams, tools and many more writes. When a burst of messages arrives,
// the Go scheduler shares the CPU among all of them alike, so the last
// message of a burst waits for its first event until nearly every turn
// before it has run: on two cores, 500 messages at once made the slowest
// first events wait about as long as the whole burst. With the gate, a
// running turn waits while any turn is starting, after handing on its
// first event (so before its model call) and before handing on each later
// one — at most maxWait each time, so that a stream of new messages delays
// running answers but cannot starve them. Holding only the later events
// left the model calls and their streams' decoding competing with the
// starts (500 at once on SQLite, load 8–12, 6 rounds interleaved:
// first-event p99 median 2.32 s (1.98–2.99) without the wait before the
// model call, 0.81 s (0.27–3.15) with it).
type gate struct {
	maxWait time.Duration

	mu      sync.Mutex
	pending int
	idle    chan struct{} // closed when pending drops to zero
}

func newGate(maxWait time.Duration) *gate {
	c := make(chan struct{})
	close(c)
	return &gate{maxWait: maxWait, idle: c}
}

// enter counts a turn as starting; the func it returns counts it as
// started, once, however often it is called.
func (g *gate) enter() func() {
	g.mu.Lock()
	if g.pending == 0 {
		g.idle = make(chan struct{})
	}
	g.pending++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.pending--; g.pending == 0 {
				close(g.idle)
			}
		})
	}
}

// wait returns once no turn is starting, after maxWait, or when ctx ends.
func (g *gate) wait(ctx context.Context) {
	if g.maxWait <= 0 {
		return
	}
	g.mu.Lock()
	idle := g.idle
	g.mu.Unlock()
	select {
	case <-idle:
		return
	default:
	}
	t := time.NewTimer(g.maxWait)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}
