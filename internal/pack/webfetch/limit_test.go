package webfetch

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolport/toolport/tool"
)

func wantBusy(t *testing.T, err error) {
	t.Helper()
	var te *tool.Error
	if !errors.As(err, &te) || te.Code != tool.CodeRateLimit || !te.Retryable {
		t.Fatalf("err = %v, want a retryable RATE_LIMIT tool error", err)
	}
}

func TestLimiterSlots(t *testing.T) {
	// In a bubble the queue wait runs on the fake clock, and synctest.Wait
	// tells when the waiter is queued, so nothing waits out real time.
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(2, 1<<20, 50*time.Millisecond)
		r1, err := l.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		r2, err := l.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = l.acquire(t.Context())
		wantBusy(t, err)
		if waited := time.Since(start); waited != 50*time.Millisecond {
			t.Errorf("gave up after %v, want the 50ms wait", waited)
		}

		r1()
		r2()

		// A slot freed while a caller waits goes to it.
		l = newLimiter(1, 1<<20, time.Minute)
		r1, err = l.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			r, err := l.acquire(context.Background())
			if err == nil {
				r()
			}
			got <- err
		}()
		synctest.Wait() // the waiter is blocked on the slot
		r1()
		if err := <-got; err != nil {
			t.Errorf("waiter not admitted when a slot freed: %v", err)
		}
	})
}

func TestLimiterBytes(t *testing.T) {
	// synctest.Wait, not a sleep, tells when the big reservation is queued.
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(8, 100, 50*time.Millisecond)
		r60, err := l.reserve(t.Context(), 60)
		if err != nil {
			t.Fatal(err)
		}
		r40, err := l.reserve(t.Context(), 40)
		if err != nil {
			t.Fatalf("60+40 fit in 100: %v", err)
		}
		_, err = l.reserve(t.Context(), 1)
		wantBusy(t, err)

		// Waiters are served in order as bytes come back.
		big := make(chan error, 1)
		go func() {
			r, err := l.reserve(context.Background(), 1000) // over the budget: takes all of it
			if err == nil {
				r()
			}
			big <- err
		}()
		synctest.Wait() // the big reservation waits behind r60 and r40
		r60()
		r60() // releasing twice gives back nothing more
		r40()
		if err := <-big; err != nil {
			t.Fatalf("a page over the budget was not admitted alone: %v", err)
		}
		l.mu.Lock()
		used, waiters := l.used, len(l.waiters)
		l.mu.Unlock()
		if used != 0 || waiters != 0 {
			t.Errorf("after all releases: used=%d waiters=%d, want 0 and 0", used, waiters)
		}
	})
}

func TestLimiterCancelWhileWaiting(t *testing.T) {
	l := newLimiter(1, 10, time.Minute)
	r, _ := l.acquire(t.Context())
	defer r()
	rb, _ := l.reserve(t.Context(), 10)
	defer rb()

	for name, wait := range map[string]func(context.Context) error{
		"slot":  func(ctx context.Context) error { _, err := l.acquire(ctx); return err },
		"bytes": func(ctx context.Context) error { _, err := l.reserve(ctx, 5); return err },
	} {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		err := wait(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: returned %v after the cancellation, want promptly", name, d)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiters) != 0 || l.used != 10 {
		t.Errorf("a canceled waiter left state behind: used=%d waiters=%d", l.used, len(l.waiters))
	}
}
