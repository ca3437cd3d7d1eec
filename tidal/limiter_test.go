package tidal

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cache"
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

func TestCache(t *testing.T) {
	f := newFakeTidal(t)
	shared := cache.NewMemory(cache.MemoryConfig{})
	replica := func(country string) *Client {
		return f.client(func(cfg *Config) { cfg.Cache, cfg.CountryCode = shared, country })
	}
	ctx := context.Background()
	first, err := replica("US").Search(ctx, "radiohead", SearchAll, 10)
	if err != nil {
		t.Fatal(err)
	}
	sent := len(f.apiRequests())
	again, err := replica("US").Search(ctx, "radiohead", SearchAll, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.apiRequests()); n != sent {
		t.Fatalf("a second replica's identical search sent %d more requests", n-sent)
	}
	if len(again.Tracks) != len(first.Tracks) || len(again.Tracks) == 0 || again.Tracks[0].ID != first.Tracks[0].ID {
		t.Fatalf("cached answer differs: %d vs %d tracks", len(again.Tracks), len(first.Tracks))
	}
	if _, err := replica("DE").Search(ctx, "radiohead", SearchAll, 10); err != nil {
		t.Fatal(err)
	}
	if len(f.apiRequests()) == sent {
		t.Fatal("another market's search was answered from the US answer")
	}
	// A failure is not kept: a search TIDAL answers 503 asks TIDAL each time.
	f.mu.Lock()
	f.hook = func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, `{"errors":[{"status":"503","detail":"down"}]}`, http.StatusServiceUnavailable)
		return true
	}
	f.mu.Unlock()
	before := len(f.apiRequests())
	for range 2 {
		if _, err := replica("US").Search(ctx, "portishead", SearchAll, 10); err == nil {
			t.Fatal("search succeeded on a 503")
		}
	}
	if n := len(f.apiRequests()) - before; n < 2 {
		t.Fatalf("%d requests for two searches answered 503: the failure was cached", n)
	}
}

// TestCacheKeepsUsersApart: a client acting as a logged-in user neither
// reads nor fills the shared cache, since with one Redis for every replica
// a user's answers would otherwise reach another user asking the same URL.
func TestCacheKeepsUsersApart(t *testing.T) {
	f := newFakeTidal(t)
	shared := cache.NewMemory(cache.MemoryConfig{})
	app := f.client(func(cfg *Config) { cfg.Cache = shared })
	ctx := context.Background()
	if _, err := app.Search(ctx, "radiohead", SearchAll, 10); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.valid["user-token"] = true
	f.mu.Unlock()
	user := app.WithUser(&UserTokenSource{tok: &UserToken{AccessToken: "user-token", Expiry: time.Now().Add(time.Hour)}, now: time.Now})
	for range 2 {
		before := len(f.apiRequests())
		if _, err := user.Search(ctx, "radiohead", SearchAll, 10); err != nil {
			t.Fatal(err)
		}
		if len(f.apiRequests()) == before {
			t.Fatal("a user's search was answered from the shared cache")
		}
	}
}

// TestCacheUse: a call's context says how old a cached answer it accepts,
// and learns the age of the answers it was given.
func TestCacheUse(t *testing.T) {
	f := newFakeTidal(t)
	shared := cache.NewMemory(cache.MemoryConfig{})
	c := f.client(func(cfg *Config) { cfg.Cache = shared })
	clock := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return clock }
	ctx := context.Background()
	if _, err := c.Search(ctx, "radiohead", SearchTracks, 10); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(90 * time.Second)
	search := func(maxAge time.Duration) (sent int, ages []time.Duration) {
		t.Helper()
		before := len(f.apiRequests())
		use := c.WithCacheUse(maxAge, func(age time.Duration) { ages = append(ages, age) })
		if _, err := use.Search(ctx, "radiohead", SearchTracks, 10); err != nil {
			t.Fatal(err)
		}
		return len(f.apiRequests()) - before, ages
	}
	tests := []struct {
		name     string
		maxAge   time.Duration
		wantSent bool
		wantAge  time.Duration
	}{
		{"an answer younger than maxAge is reused, with its age", 5 * time.Minute, false, 90 * time.Second},
		{"an answer older than maxAge is asked again", time.Minute, true, 0},
		{"the refreshed answer is reused at age 0", time.Minute, false, 0},
		{"maxAge 0 always asks TIDAL", 0, true, 0},
	}
	for _, tt := range tests {
		sent, ages := search(tt.maxAge)
		if (sent > 0) != tt.wantSent {
			t.Errorf("%s: %d requests sent", tt.name, sent)
		}
		if tt.wantSent && len(ages) != 0 {
			t.Errorf("%s: reported cached ages %v for an answer from TIDAL", tt.name, ages)
		}
		if !tt.wantSent && (len(ages) == 0 || ages[0] != tt.wantAge) {
			t.Errorf("%s: cached ages %v, want [%v]", tt.name, ages, tt.wantAge)
		}
	}
	// Past the TTL an answer is never used, whatever the call accepts.
	clock = clock.Add(DefaultCacheTTL + time.Second)
	if sent, _ := search(365 * 24 * time.Hour); sent == 0 {
		t.Error("an answer older than the cache TTL was reused")
	}
}
