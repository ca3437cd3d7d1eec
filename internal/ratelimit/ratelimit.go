// Package ratelimit spaces requests to an upstream so that a burst of calls
// slows down before the upstream answers 429. Both limiters implement GCRA
// (the generic cell rate algorithm, a token bucket kept as one timestamp):
// [Memory] within one process, the embedded default, and [Redis] shared by
// every replica that names the same key, so that replicas together keep to
// one quota (TOOLPORT_REDIS_URL).
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Limiter grants requests at a rate.
type Limiter interface {
	// Wait blocks until one request may go. When that would be later than the
	// limiter's MaxWait or ctx's deadline it fails at once with a
	// [*WaitError] and takes nothing; when ctx ends first it returns ctx's
	// error.
	Wait(ctx context.Context) error
}

// Rate is a sustained rate and a burst: Burst requests may go at once, then
// PerSecond a second.
type Rate struct {
	PerSecond float64
	Burst     int
	// MaxWait bounds how long Wait sleeps for a slot; DefaultMaxWait when 0.
	MaxWait time.Duration
}

// DefaultMaxWait is the longest Wait sleeps by default: longer, and a call
// would spend its time budget queueing.
const DefaultMaxWait = 10 * time.Second

func (r Rate) check() error {
	if !(r.PerSecond > 0) || math.IsInf(r.PerSecond, 0) || r.PerSecond > 1e6 {
		return fmt.Errorf("ratelimit: rate must be in (0, 1e6] per second, got %v", r.PerSecond)
	}
	if r.Burst < 1 || r.Burst > 1e6 {
		return fmt.Errorf("ratelimit: burst must be in [1, 1e6], got %d", r.Burst)
	}
	return nil
}

// interval is the time one request's slot takes.
func (r Rate) interval() time.Duration {
	return time.Duration(float64(time.Second) / r.PerSecond)
}

func (r Rate) maxWait() time.Duration {
	if r.MaxWait > 0 {
		return r.MaxWait
	}
	return DefaultMaxWait
}

// WaitError is returned when the next slot is too far away.
type WaitError struct{ Delay time.Duration }

func (e *WaitError) Error() string {
	return "rate limit: the next request is allowed in " + e.Delay.Round(time.Millisecond).String()
}

// RetryAfter says when to try again (clients read it through an interface).
func (e *WaitError) RetryAfter() time.Duration { return e.Delay }

// limit is how long a reservation may wait: MaxWait, or less when ctx ends
// sooner.
func limit(ctx context.Context, r Rate, now time.Time) time.Duration {
	w := r.maxWait()
	if dl, ok := ctx.Deadline(); ok {
		w = min(w, dl.Sub(now))
	}
	return max(w, 0)
}

// Memory is a limiter within one process.
type Memory struct {
	rate Rate
	now  func() time.Time

	mu  sync.Mutex
	tat time.Time // theoretical arrival time of the next request
}

// NewMemory returns an in-process limiter.
func NewMemory(r Rate) (*Memory, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	return &Memory{rate: r, now: time.Now}, nil
}

// reserve takes the next slot if it is no more than maxWait away, and says
// how long until it.
func (m *Memory) reserve(maxWait time.Duration) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	tat := m.tat
	if tat.Before(now) {
		tat = now
	}
	tau := time.Duration(m.rate.Burst-1) * m.rate.interval()
	delay := max(tat.Add(-tau).Sub(now), 0)
	if delay > maxWait {
		return delay, false
	}
	m.tat = tat.Add(m.rate.interval())
	return delay, true
}

// Wait implements [Limiter].
func (m *Memory) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d, ok := m.reserve(limit(ctx, m.rate, m.now()))
	if !ok {
		return &WaitError{Delay: d}
	}
	return httpclient.SleepCtx(ctx, d)
}

// ParseRate reads a rate setting: "R" (R requests a second, in bursts of
// defaultBurst) or "R:B" (bursts of B), e.g. "1", "20:20", "0.5:1".
func ParseRate(s string, defaultBurst int) (Rate, error) {
	rs, bs, hasBurst := strings.Cut(strings.TrimSpace(s), ":")
	per, err := strconv.ParseFloat(strings.TrimSpace(rs), 64)
	if err != nil {
		return Rate{}, fmt.Errorf("ratelimit: %q: want requests per second, optionally :burst (e.g. 2:10)", s)
	}
	r := Rate{PerSecond: per, Burst: defaultBurst}
	if hasBurst {
		if r.Burst, err = strconv.Atoi(strings.TrimSpace(bs)); err != nil {
			return Rate{}, fmt.Errorf("ratelimit: %q: the burst must be a whole number", s)
		}
	}
	return r, r.check()
}
