package tidal

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Defaults before TIDAL has told us its limits. They are deliberately modest:
// the first answer replaces them with the real figures.
const (
	defaultBurst     = 10
	defaultReplenish = 2.0 // tokens per second
	// maxRateWait is the longest the client waits for a token. Beyond it the
	// call fails with RATE_LIMIT rather than sitting on a tool's time budget.
	maxRateWait = 20 * time.Second
)

// bucket is a client-side token bucket that mirrors TIDAL's server-side one
// (a Spring Cloud Gateway style limiter announced in x-ratelimit-* headers),
// so that bursts of calls slow down before TIDAL answers 429.
type bucket struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	mu       sync.Mutex
	tokens   float64
	capacity float64
	rate     float64 // tokens per second
	cost     float64 // tokens one request takes
	last     time.Time
}

func newBucket(now func() time.Time, sleep func(context.Context, time.Duration) error) *bucket {
	return &bucket{now: now, sleep: sleep, tokens: defaultBurst, capacity: defaultBurst,
		rate: defaultReplenish, cost: 1, last: now()}
}

// refill adds what has replenished since last. Callers hold mu.
func (b *bucket) refill() {
	t := b.now()
	if el := t.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(b.capacity, b.tokens+el*b.rate)
	}
	b.last = t
}

// delay is how long until one request's tokens are there. Callers hold mu.
func (b *bucket) delay() time.Duration {
	missing := b.cost - b.tokens
	if missing <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(missing / b.rate * float64(time.Second)))
}

// wait takes the tokens for one request, sleeping until they are there. It
// returns ctx's error if ctx ends first, and errRateWait if the wait would be
// longer than maxRateWait.
func (b *bucket) wait(ctx context.Context) error {
	for {
		b.mu.Lock()
		b.refill()
		d := b.delay()
		if d == 0 {
			b.tokens -= b.cost
			b.mu.Unlock()
			return nil
		}
		b.mu.Unlock()
		if d > maxRateWait {
			return errRateWait{d}
		}
		if dl, ok := ctx.Deadline(); ok && b.now().Add(d).After(dl) {
			return errRateWait{d}
		}
		if err := b.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// observe adopts the limiter state an answer announced. TIDAL's count is the
// truth; ours only fills the gaps between answers.
func (b *bucket) observe(h http.Header) {
	remaining, okR := headerFloat(h, "X-Ratelimit-Remaining")
	burst, okB := headerFloat(h, "X-Ratelimit-Burst-Capacity")
	rate, okP := headerFloat(h, "X-Ratelimit-Replenish-Rate")
	cost, okC := headerFloat(h, "X-Ratelimit-Requested-Tokens")
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if okB && burst >= 1 {
		b.capacity = burst
	}
	if okP && rate > 0 {
		b.rate = rate
	}
	if okC && cost >= 1 && cost <= b.capacity {
		b.cost = cost
	}
	if okR && remaining >= 0 {
		b.tokens = math.Min(remaining, b.capacity)
	}
}

// exhausted empties the bucket after a 429 and says how long until a request
// may go again: the replenish time of one request's tokens.
func (b *bucket) exhausted() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	b.tokens = math.Min(b.tokens, 0)
	return b.delay()
}

// headerFloat reads a non-negative, finite number header.
func headerFloat(h http.Header, name string) (float64, bool) {
	v := h.Get(name)
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e9 {
		return 0, false
	}
	return f, true
}

// errRateWait is returned when the bucket would make a call wait too long.
type errRateWait struct{ d time.Duration }

func (e errRateWait) Error() string {
	return "tidal: client-side rate limit: next request in " + e.d.String()
}
