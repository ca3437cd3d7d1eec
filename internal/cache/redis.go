package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of a Redis connection. A cache that answers in more than a few
// hundred milliseconds is worse than none: the timeouts are short, and after a
// failure the cache is skipped for a moment rather than asked again on every
// call.
const (
	DefaultRedisTimeout = 300 * time.Millisecond
	DefaultRedisBackoff = 2 * time.Second
	DefaultRedisPrefix  = "toolport:cache:"
)

// RedisConfig configures a [Redis] cache. Zero fields take the defaults.
type RedisConfig struct {
	Prefix        string // put in front of every key; DefaultRedisPrefix when ""
	MaxValueBytes int    // DefaultMaxValueBytes when 0
	// Backoff is how long the cache answers ErrUnavailable without asking
	// Redis after a failure; DefaultRedisBackoff when 0.
	Backoff time.Duration
}

// Redis is a cache shared by every process that uses the same Redis and prefix.
// Values expire with Redis's own TTLs (PX); locks are SET NX PX with a random
// token, released only by their holder.
type Redis struct {
	c         redis.UniversalClient
	cfg       RedisConfig
	downUntil atomic.Int64 // unix nanoseconds; 0 when up
}

// ParseRedisURL makes Redis client options from a redis:// or rediss:// URL
// with the short timeouts a cache needs. Its errors never quote the URL, which
// may hold a password.
func ParseRedisURL(rawURL string) (*redis.Options, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, errors.New("not a valid redis:// or rediss:// URL (redis://[:password@]host:port/db)")
	}
	opt.DialTimeout = DefaultRedisTimeout
	opt.ReadTimeout = DefaultRedisTimeout
	opt.WriteTimeout = DefaultRedisTimeout
	opt.MaxRetries = 1
	opt.DialerRetries = 1
	opt.ContextTimeoutEnabled = true
	return opt, nil
}

// OpenRedis connects to the Redis at rawURL (see [ParseRedisURL]). It does
// not dial: an unreachable Redis shows in [Redis.Ping] and as misses.
func OpenRedis(rawURL string, cfg RedisConfig) (*Redis, error) {
	opt, err := ParseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	return NewRedis(redis.NewClient(opt), cfg), nil
}

// NewRedis returns a cache over client; closing the cache closes the client.
func NewRedis(client redis.UniversalClient, cfg RedisConfig) *Redis {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultRedisPrefix
	}
	if cfg.MaxValueBytes <= 0 {
		cfg.MaxValueBytes = DefaultMaxValueBytes
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultRedisBackoff
	}
	return &Redis{c: client, cfg: cfg}
}

// Client returns the underlying client, for sharing its connections (the
// rate limiters use the same Redis).
func (r *Redis) Client() redis.UniversalClient { return r.c }

// Close closes the client.
func (r *Redis) Close() error { return r.c.Close() }

// Ping checks that Redis answers, whatever the back-off says.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	r.downUntil.Store(0)
	return nil
}

// up reports whether Redis may be asked now.
func (r *Redis) up() bool {
	d := r.downUntil.Load()
	return d == 0 || time.Now().UnixNano() >= d
}

// failed notes a failure and wraps err as ErrUnavailable. A context ended by
// the caller is the caller's doing, not an outage.
func (r *Redis) failed(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		r.downUntil.Store(time.Now().Add(r.cfg.Backoff).UnixNano())
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

var errBackoff = errors.New("redis failed recently")

// Get returns the value under key.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if !r.up() {
		return nil, false, fmt.Errorf("%w: %w", ErrUnavailable, errBackoff)
	}
	v, err := r.c.Get(ctx, r.cfg.Prefix+key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	case err != nil:
		return nil, false, r.failed(ctx, err)
	}
	if len(v) > r.cfg.MaxValueBytes { // written by a process with a larger bound
		return nil, false, nil
	}
	return v, true, nil
}

// Set stores value under key for ttl.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if len(value) > r.cfg.MaxValueBytes {
		return ErrTooLarge
	}
	if ttl <= 0 {
		return nil
	}
	if !r.up() {
		return fmt.Errorf("%w: %w", ErrUnavailable, errBackoff)
	}
	if err := r.c.Set(ctx, r.cfg.Prefix+key, value, max(ttl, time.Millisecond)).Err(); err != nil {
		return r.failed(ctx, err)
	}
	return nil
}

// Delete removes key.
func (r *Redis) Delete(ctx context.Context, key string) error {
	if !r.up() {
		return fmt.Errorf("%w: %w", ErrUnavailable, errBackoff)
	}
	if err := r.c.Del(ctx, r.cfg.Prefix+key).Err(); err != nil {
		return r.failed(ctx, err)
	}
	return nil
}

// unlock deletes a lock only if it still holds the holder's token, so that a
// holder whose lock expired cannot free the next holder's.
var unlock = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// TryLock claims key with SET NX PX.
func (r *Redis) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	if !r.up() {
		return nil, false, fmt.Errorf("%w: %w", ErrUnavailable, errBackoff)
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	token := hex.EncodeToString(b[:])
	k := r.cfg.Prefix + "lock:" + key
	ok, err := r.c.SetNX(ctx, k, token, max(ttl, time.Millisecond)).Result()
	if err != nil {
		return nil, false, r.failed(ctx, err)
	}
	if !ok {
		return nil, false, nil
	}
	return func() {
		// Released on the way out of a call whose context may have ended: a
		// short context of its own. Should it fail, the lock expires by itself.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultRedisTimeout)
		defer cancel()
		_ = unlock.Run(ctx, r.c, []string{k}, token).Err()
	}, true, nil
}
