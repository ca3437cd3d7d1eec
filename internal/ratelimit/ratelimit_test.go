package ratelimit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolport/toolport/internal/cache/redistest"
)

func TestMemoryReservations(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	m, err := NewMemory(Rate{PerSecond: 10, Burst: 3})
	if err != nil {
		t.Fatal(err)
	}
	m.now = func() time.Time { return now }
	steps := []struct {
		advance time.Duration
		maxWait time.Duration
		delay   time.Duration
		ok      bool
	}{
		{0, time.Second, 0, true}, // the burst: three at once
		{0, time.Second, 0, true},
		{0, time.Second, 0, true},
		{0, time.Second, 100 * time.Millisecond, true}, // then one per 100 ms
		{0, time.Second, 200 * time.Millisecond, true},
		{0, 150 * time.Millisecond, 300 * time.Millisecond, false}, // too far: refused, nothing taken
		{0, time.Second, 300 * time.Millisecond, true},             // so the same slot is still free
		{time.Second, time.Second, 0, true},                        // a second later the bucket has refilled
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		d, ok := m.reserve(s.maxWait)
		if d != s.delay || ok != s.ok {
			t.Fatalf("step %d: reserve = %v, %v; want %v, %v", i, d, ok, s.delay, s.ok)
		}
	}
}

func TestRateChecks(t *testing.T) {
	for _, r := range []Rate{{PerSecond: 0, Burst: 1}, {PerSecond: -1, Burst: 1}, {PerSecond: 1, Burst: 0}} {
		if _, err := NewMemory(r); err == nil {
			t.Errorf("NewMemory(%+v) accepted", r)
		}
	}
}

// In a synctest bubble the clock is fake: a Wait that sleeps at all shows
// as time passed, however loaded the machine.
func TestWaitBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := NewMemory(Rate{PerSecond: 1, Burst: 1, MaxWait: 50 * time.Millisecond})
		ctx := context.Background()
		if err := m.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		var we *WaitError
		if err := m.Wait(ctx); !errors.As(err, &we) || we.RetryAfter() <= 900*time.Millisecond {
			t.Fatalf("second Wait within MaxWait 50ms at 1/s: %v", err)
		}
		m2, _ := NewMemory(Rate{PerSecond: 1, Burst: 1})
		_ = m2.Wait(ctx)
		dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := m2.Wait(dctx); !errors.As(err, &we) {
			t.Fatalf("Wait past the context's deadline: %v", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("Wait slept %v though the slot was past the deadline", waited)
		}
	})
}

// countGrants runs workers goroutines calling l.Wait for window and counts the
// grants made inside it.
func countGrants(t *testing.T, window time.Duration, workers int, limiters ...Limiter) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	var grants atomic.Int32
	var wg sync.WaitGroup
	for i := range workers {
		l := limiters[i%len(limiters)]
		wg.Go(func() {
			for {
				err := l.Wait(ctx)
				if err != nil {
					var we *WaitError
					if errors.As(err, &we) && ctx.Err() == nil {
						// The load's pacing: no slot before the window
						// ends yet; ask again shortly rather than spin.
						// Grants are counted over a real-time window,
						// as the Redis limiter keeps time on its server.
						time.Sleep(5 * time.Millisecond)
						continue
					}
					return
				}
				if ctx.Err() != nil {
					return
				}
				grants.Add(1)
			}
		})
	}
	wg.Wait()
	return int(grants.Load())
}

// TestRedisSharedRate: two limiters on one Redis key together never exceed the
// rate, where two in-process limiters each grant the full rate.
func TestRedisSharedRate(t *testing.T) {
	client, prefix := redistest.Client(t)
	rate := Rate{PerSecond: 20, Burst: 5}
	window := 1500 * time.Millisecond
	allowed := rate.Burst + int(rate.PerSecond*window.Seconds()) + 1 // +1: a grant at the window's edge

	a, err := NewRedis(client, prefix+"brave", rate, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewRedis(client, prefix+"brave", rate, nil)
	shared := countGrants(t, window, 8, a, b)
	if shared > allowed || shared < allowed/2 {
		t.Fatalf("two Redis limiters on one key granted %d in %v; want at most %d (and not starved)", shared, window, allowed)
	}

	ma, _ := NewMemory(rate)
	mb, _ := NewMemory(rate)
	if separate := countGrants(t, window, 8, ma, mb); separate <= allowed {
		t.Fatalf("two in-process limiters granted %d, no more than one shared rate (%d): the test cannot tell sharing apart", separate, allowed)
	}
	if err := a.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRedisDownFallsBack: with Redis unreachable, Wait still limits, in process,
// and reports the failure.
func TestRedisDownFallsBack(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
	defer client.Close()
	var failures atomic.Int32
	l, err := NewRedis(client, "k", Rate{PerSecond: 1, Burst: 2, MaxWait: 10 * time.Millisecond}, func(error) { failures.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 2 {
		if err := l.Wait(ctx); err != nil {
			t.Fatalf("Wait %d with Redis down: %v", i, err)
		}
	}
	var we *WaitError
	if err := l.Wait(ctx); !errors.As(err, &we) {
		t.Fatalf("third Wait beyond the burst: %v, want the fallback's WaitError", err)
	}
	if failures.Load() != 1 {
		t.Fatalf("onError heard %d failures, want 1 (then the back-off)", failures.Load())
	}
	if l.Ping(ctx) == nil {
		t.Fatal("Ping of a down Redis succeeded")
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
		ok   bool
	}{
		{"1", Rate{PerSecond: 1, Burst: 3}, true},
		{" 20:20 ", Rate{PerSecond: 20, Burst: 20}, true},
		{"0.5:1", Rate{PerSecond: 0.5, Burst: 1}, true},
		{"0", Rate{}, false},
		{"-1", Rate{}, false},
		{"NaN", Rate{}, false},
		{"Inf", Rate{}, false},
		{"2:0", Rate{}, false},
		{"2:x", Rate{}, false},
		{"fast", Rate{}, false},
		{"", Rate{}, false},
	} {
		got, err := ParseRate(tc.in, 3)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseRate(%q) = %+v, %v", tc.in, got, err)
		}
	}
}
