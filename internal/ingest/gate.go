package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
	"github.com/toolport/toolport/tool"
)

// Limiter paces calls to one upstream: Wait blocks until the next call may
// go (or ctx ends). *rate.Limiter implements it; a limiter shared between
// processes (a Redis token bucket) can be plugged in through [Limit].
type Limiter interface {
	Wait(ctx context.Context) error
}

// Limit bounds one upstream.
type Limit struct {
	// Concurrency is how many calls may be in flight at once (1 when ≤ 0).
	Concurrency int
	// Rate is the token bucket's refill, calls per second, and Burst its
	// size; Rate ≤ 0 means no pacing. Ignored when Limiter is set.
	Rate  float64
	Burst int
	// Limiter, when set, replaces the in-process token bucket.
	Limiter Limiter
	// Timeout bounds each attempt (DefaultAttemptTimeout when 0).
	Timeout time.Duration
}

// Retry is the one retry rule of every upstream call: a transient failure
// (network error, timeout, 429, 502, 503, 504: the tool contract's rule) is
// tried again up to Attempts times in all, after the server's Retry-After
// when it sent one, else after an exponential backoff from BaseDelay.
type Retry struct {
	Attempts      int           // calls in all, at least 1 (DefaultAttempts when 0)
	BaseDelay     time.Duration // first backoff (DefaultBaseDelay when 0)
	MaxDelay      time.Duration // longest backoff, and longest Retry-After waited for (DefaultMaxDelay when 0)
	DisableJitter bool          // tests: exact delays
}

// Defaults of [Limit] and [Retry].
const (
	DefaultAttemptTimeout = 30 * time.Second
	DefaultAttempts       = 4
	DefaultBaseDelay      = 500 * time.Millisecond
	DefaultMaxDelay       = 30 * time.Second
)

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = DefaultAttempts
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = DefaultBaseDelay
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = DefaultMaxDelay
	}
	return r
}

// gate is one upstream's bounds: a semaphore for concurrency, a token
// bucket for rate, the retry rule, and a count of the calls made.
type gate struct {
	name    string
	sem     chan struct{}
	lim     Limiter
	timeout time.Duration
	retry   Retry
	calls   func(name string) // counts each attempt
}

func newGate(name string, l Limit, r Retry, calls func(string)) *gate {
	g := &gate{name: name, sem: make(chan struct{}, max(l.Concurrency, 1)), timeout: l.Timeout, retry: r.withDefaults(), calls: calls}
	if g.timeout <= 0 {
		g.timeout = DefaultAttemptTimeout
	}
	switch {
	case l.Limiter != nil:
		g.lim = l.Limiter
	case l.Rate > 0:
		g.lim = rate.NewLimiter(rate.Limit(l.Rate), max(l.Burst, 1))
	}
	return g
}

// do runs call under the gate's bounds, retrying transient failures. It
// returns the number of attempts made with the last error.
func (g *gate) do(ctx context.Context, call func(ctx context.Context) error) (int, error) {
	var err error
	for attempt := 1; ; attempt++ {
		err = g.once(ctx, call)
		if err == nil {
			return attempt, nil
		}
		if ctx.Err() != nil {
			return attempt, ctx.Err()
		}
		retry, after := transient(err)
		if !retry || attempt >= g.retry.Attempts {
			return attempt, err
		}
		delay := g.backoff(attempt)
		if after > 0 {
			if after > g.retry.MaxDelay {
				return attempt, fmt.Errorf("%w (the server asks to wait %s, more than the %s allowed)", err, after.Round(time.Second), g.retry.MaxDelay)
			}
			delay = after
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return attempt, ctx.Err()
		case <-t.C:
		}
	}
}

func (g *gate) once(ctx context.Context, call func(ctx context.Context) error) error {
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.sem }()
	if g.lim != nil {
		if err := g.lim.Wait(ctx); err != nil {
			return fmt.Errorf("%s: waiting for the rate limit: %w", g.name, err)
		}
	}
	if g.calls != nil {
		g.calls(g.name)
	}
	actx, cancel := context.WithTimeoutCause(ctx, g.timeout, errAttemptTimeout)
	defer cancel()
	err := call(actx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
		return fmt.Errorf("%s: no answer within %s: %w", g.name, g.timeout, errAttemptTimeout)
	}
	return err
}

var errAttemptTimeout = errors.New("attempt timed out")

func (g *gate) backoff(attempt int) time.Duration {
	d := g.retry.BaseDelay << (attempt - 1)
	if d <= 0 || d > g.retry.MaxDelay {
		d = g.retry.MaxDelay
	}
	if !g.retry.DisableJitter {
		d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	}
	return d
}

// transient applies the tool contract's rule to an upstream failure: network
// errors, timeouts, 429 and 502/503/504 may succeed later. It also returns
// the server's Retry-After, when it sent one.
func transient(err error) (bool, time.Duration) {
	if errors.Is(err, errAttemptTimeout) {
		return true, 0
	}
	var le *lrclib.Error
	if errors.As(err, &le) {
		return statusTransient(le.StatusCode), le.RetryAfter
	}
	var re *reccobeats.Error
	if errors.As(err, &re) {
		return statusTransient(re.StatusCode), re.RetryAfter
	}
	var mx *MusixmatchError
	if errors.As(err, &mx) {
		return statusTransient(mx.StatusCode), 0
	}
	var me *llm.Error
	if errors.As(err, &me) {
		if me.Status != 0 {
			return statusTransient(me.Status), me.RetryAfter
		}
		return me.Code == llm.CodeNetwork || me.Code == llm.CodeTimeout, me.RetryAfter
	}
	te := tool.Classify(err)
	return te.Retryable, te.RetryAfter
}

func statusTransient(status int) bool {
	return tool.HTTPStatusError(status, 0, http.StatusText(status)).Retryable
}
