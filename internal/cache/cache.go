// Package cache stores byte values under string keys for a while: the
// results of upstream calls, so that identical calls within a TTL are
// answered once. [Memory] is the embedded default, bounded in entries and
// bytes and evicting the least recently used entry; [Redis] shares one cache
// between every replica of a deployment (TOOLPORT_REDIS_URL).
//
// Both also hand out short locks ([Cache.TryLock]), with which replicas agree
// that one of them calls the upstream for a key while the others wait for its
// result in the cache.
//
// # The result cache and rate limits, across the contract
//
// Caching is part of the contract, not of the packs: `tool.WithResultCache(cache, policies)` gives
// the tools named in `policies` (a TTL each, chosen per upstream in `internal/cli/scaleout.go`) the
// `fresh` and `maxAgeSeconds` arguments and the `cached`/`cachedAgeSeconds` envelope fields. The key
// is the tool's name, a hash of its output schema and the canonical validated arguments (keys
// sorted, defaults applied, cache arguments removed); only results that pass the output check and
// are at most 512 KiB are kept; a hit is decoded into the output type and encoded again (a damaged
// entry is a miss), not checked again: the cache is trusted as the database is. Identical concurrent calls share one upstream call: `singleflight` within a
// process; across processes the first takes a short `SET NX PX` lock and the others poll the cache
// (at most 10 s, or until the lock is free because the call failed). `internal/cache` provides the
// store (`Memory`: LRU with TTLs, bounded in entries and bytes; `Redis`: shared, short timeouts, a
// 2 s back-off after a failure so an outage costs each call nothing) and `internal/ratelimit` the
// limiters (GCRA: one timestamp per quota, in process or in a Redis Lua script on Redis's clock).
// Brave and TIDAL clients take a `Limiter` (`brave.WithLimiter`, `tidal.Config.Limiter`); TIDAL's own
// bucket still follows its `x-ratelimit-*` headers. TIDAL's answers are cached in its client
// (`tidal.Config.Cache`, keyed by request URL, stored with their time) rather than per tool,
// because the music tools mix them with the user's library and index, which must be read on every
// call: their policies say `InTool`, so the registry still gives them `fresh`/`maxAgeSeconds`,
// passes the age they may accept in the context (`tool.CacheMaxAge` → `tidal.Client.WithCacheUse`), and
// marks the result `cached` with the oldest reused answer's age (`tool.ReportCached`). With `TOOLPORT_REDIS_URL` unset everything is
// in-process; with it, every replica shares results and quotas, and a Redis outage degrades to
// no cache and per-process limits, never to failed calls.
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
