package server

import (
	"context"
	"testing"
	"time"
)

func TestStartGate(t *testing.T) {
	waited := func(g *startGate, ctx context.Context) time.Duration {
		start := time.Now()
		g.wait(ctx)
		return time.Since(start)
	}
	g := newStartGate(time.Hour)
	if d := waited(g, context.Background()); d > time.Second {
		t.Fatalf("wait with nothing starting took %v", d)
	}

	// A running turn waits while one starts, and goes on once it started.
	done := g.enter()
	other := g.enter()
	other()
	other() // counted once however often called
	released := make(chan time.Duration, 1)
	go func() { released <- waited(g, context.Background()) }()
	select {
	case d := <-released:
		t.Fatalf("wait returned after %v while a turn was starting", d)
	case <-time.After(50 * time.Millisecond):
	}
	done()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return once the starting turn started")
	}

	// The wait is bounded, and ends with its context.
	short := newStartGate(20 * time.Millisecond)
	stuck := short.enter()
	defer stuck()
	if d := waited(short, context.Background()); d < 20*time.Millisecond || d > 5*time.Second {
		t.Errorf("bounded wait took %v, want about 20ms", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	busy := g.enter()
	defer busy()
	if d := waited(g, ctx); d > time.Second {
		t.Errorf("wait with a canceled context took %v", d)
	}
	if d := waited(newStartGate(-1), context.Background()); d > time.Second {
		t.Errorf("a gate turned off waited %v", d)
	}
}
