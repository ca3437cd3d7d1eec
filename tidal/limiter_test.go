package tidal

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// stubLimiter grants or refuses every request, counting them.
type stubLimiter struct {
	waits  atomic.Int32
	refuse time.Duration // > 0: refuse, asking to come back after it
}

type refusal time.Duration

func (r refusal) Error() string             { return "limited" }
func (r refusal) RetryAfter() time.Duration { return time.Duration(r) }
func (l *stubLimiter) Wait(context.Context) error {
	l.waits.Add(1)
	if l.refuse > 0 {
		return refusal(l.refuse)
	}
	return nil
}

func TestSharedLimiter(t *testing.T) {
	t.Run("every request waits for it", func(t *testing.T) {
		f := newFakeTidal(t)
		lim := &stubLimiter{}
		c := f.client(func(cfg *Config) { cfg.Limiter = lim })
		if _, err := c.Search(context.Background(), "radiohead", SearchAll, 10); err != nil {
			t.Fatal(err)
		}
		if got, want := int(lim.waits.Load()), len(f.apiRequests()); got != want || got == 0 {
			t.Fatalf("limiter waited %d times for %d API requests", got, want)
		}
	})
	t.Run("a refusal is RATE_LIMITED with its wait, and no request", func(t *testing.T) {
		f := newFakeTidal(t)
		c := f.client(func(cfg *Config) { cfg.Limiter = &stubLimiter{refuse: 3 * time.Second} })
		_, err := c.Search(context.Background(), "radiohead", SearchAll, 10)
		e := kindError(t, err, ErrRateLimited)
		if e.RetryAfter != 3*time.Second {
			t.Fatalf("RetryAfter = %v", e.RetryAfter)
		}
		if n := len(f.apiRequests()); n != 0 {
			t.Fatalf("%d requests sent past a refusing limiter", n)
		}
	})
}
