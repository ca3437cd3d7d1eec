package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolport/toolport/internal/httpclient"
)

// gcra reserves the next slot of KEYS[1] atomically. Time is Redis's own
// (TIME), so that replicas with skewed clocks share one timeline. ARGV:
// interval, burst tolerance and maximum wait, in microseconds. It returns
// {granted (0|1), delay in microseconds}. The key holds the theoretical
// arrival time and expires once it is in the past, so idle keys cost nothing.
var gcra = redis.NewScript(`
local interval = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local maxwait = tonumber(ARGV[3])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call("GET", KEYS[1]) or "0")
if tat < now then tat = now end
local delay = tat - tau - now
if delay < 0 then delay = 0 end
if delay > maxwait then return {0, delay} end
local newtat = tat + interval
redis.call("SET", KEYS[1], string.format("%d", newtat), "PX", math.floor((newtat - now) / 1000) + 1000)
return {1, delay}
`)

// Redis is a limiter shared by every process that uses the same Redis and key.
// Should Redis fail, Wait falls back to an in-process limiter of the same
// rate for [Backoff]: the quota is then kept per replica rather than not at
// all, and a call never fails, nor waits on timeouts, because the limiter's
// store did.
type Redis struct {
	c         redis.UniversalClient
	key       string
	rate      Rate
	fallback  *Memory
	onError   func(error)
	downUntil atomic.Int64 // unix nanoseconds
}

// Backoff is how long a Redis limiter keeps to its in-process fallback after
// a Redis failure before asking Redis again.
const Backoff = 2 * time.Second

// NewRedis returns a limiter over client keeping its state under key.
// onError, if not nil, hears of a Redis failure once per back-off (to log it).
func NewRedis(client redis.UniversalClient, key string, r Rate, onError func(error)) (*Redis, error) {
	fb, err := NewMemory(r)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, fmt.Errorf("ratelimit: a Redis limiter needs a key")
	}
	return &Redis{c: client, key: key, rate: r, fallback: fb, onError: onError}, nil
}

// Ping checks that Redis answers.
func (l *Redis) Ping(ctx context.Context) error {
	if err := l.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// Wait implements [Limiter].
func (l *Redis) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d := l.downUntil.Load(); d != 0 && time.Now().UnixNano() < d {
		return l.fallback.Wait(ctx)
	}
	maxWait := limit(ctx, l.rate, time.Now())
	interval := l.rate.interval().Microseconds()
	tau := int64(l.rate.Burst-1) * interval
	res, err := gcra.Run(ctx, l.c, []string{l.key}, interval, tau, maxWait.Microseconds()).Int64Slice()
	if err != nil || len(res) != 2 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			err = fmt.Errorf("unexpected answer %v", res)
		}
		l.downUntil.Store(time.Now().Add(Backoff).UnixNano())
		if l.onError != nil {
			l.onError(fmt.Errorf("ratelimit %s: redis: %w", l.key, err))
		}
		return l.fallback.Wait(ctx)
	}
	d := time.Duration(res[1]) * time.Microsecond
	if res[0] == 0 {
		return &WaitError{Delay: d}
	}
	return httpclient.SleepCtx(ctx, d)
}
