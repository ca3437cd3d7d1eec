// Package cache stores byte values under string keys for a while: the
// results of upstream calls, so that identical calls within a TTL are
// answered once. [Memory] is the embedded default, bounded in entries and
// bytes and evicting the least recently used entry; [Redis] shares one cache
// between every replica of a deployment (TOOLPORT_REDIS_URL).
//
// Both also hand out short locks ([Cache.TryLock]), with which replicas agree
// that one of them calls the upstream for a key while the others wait for its
// result in the cache.
package cache

import (
	"context"
	"errors"
	"time"
)

// Default bounds of a cache.
const (
	DefaultMaxEntries    = 10_000
	DefaultMaxBytes      = 64 << 20 // 64 MiB in all
	DefaultMaxValueBytes = 1 << 20  // 1 MiB a value: a tool result is bounded well below
)

// ErrTooLarge is returned by Set for a value over the cache's value bound; the
// value is not stored.
var ErrTooLarge = errors.New("cache: value too large")

// ErrUnavailable is returned while the cache's engine is unreachable. Callers
// treat it as a miss: a cache outage must not fail what it only speeds up.
var ErrUnavailable = errors.New("cache: unavailable")

// Cache stores values for a TTL. Implementations are safe for concurrent use.
// A miss is (nil, false, nil); an error means the cache could not be asked.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Set stores value under key for ttl (> 0), replacing what was there.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
	// TryLock claims key for at most ttl if nobody holds it. When ok, release
	// frees the claim early (a no-op once it has expired and been claimed by
	// another); when not ok, release is nil.
	TryLock(ctx context.Context, key string, ttl time.Duration) (release func(), ok bool, err error)
}
