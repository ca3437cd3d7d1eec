package tool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/sync/singleflight"

	"github.com/toolport/toolport/internal/httpclient"
)

// ResultCache is where a [Registry] keeps successful results for reuse:
// in-process, or shared by replicas (internal/cache's Memory and Redis
// implement it). Its errors are never a call's failure: a call whose cache
// cannot be read or written goes to the upstream, and the registry logs a
// warning.
type ResultCache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// TryLock claims key for ttl if nobody holds it (release is nil when
	// not ok). Replicas sharing the cache use it so that one of them calls
	// the upstream for a key while the others wait for its result.
	TryLock(ctx context.Context, key string, ttl time.Duration) (release func(), ok bool, err error)
}

// CachePolicy says how a tool's successful results are reused.
type CachePolicy struct {
	// TTL is how long a result may be reused. It should fit how fast the
	// upstream's answers change and how scarce its quota is.
	TTL time.Duration
	// InTool says the tool caches its upstream reads itself instead of the
	// registry caching its whole result: for a tool whose result mixes
	// upstream answers with data that must be read on every call (a catalogue
	// search that marks the tracks in the user's library). The tool still
	// takes "fresh" and "maxAgeSeconds": it reads the age it may accept with
	// [CacheMaxAge] (TTL, lowered by those arguments) and tells what it
	// reused with [ReportCached], which sets the result's "cached" and
	// "cachedAgeSeconds".
	InTool bool
}

// The arguments every cacheable tool accepts on top of its own, and the
// fields a result from the cache carries.
const (
	ArgFresh         = "fresh"
	ArgMaxAgeSeconds = "maxAgeSeconds"
	FieldCached      = "cached"
	FieldCachedAge   = "cachedAgeSeconds"
)

// Bounds of result caching.
const (
	// MaxCachedResultBytes bounds a result kept in the cache; larger ones
	// (a long page fetched whole) are not kept.
	MaxCachedResultBytes = 512 << 10
	// maxAgeLimit bounds maxAgeSeconds (a year).
	maxAgeLimit = 365 * 24 * 3600
	// DefaultFillLock is how long a replica holds the claim to call the
	// upstream for a key: about the longest an upstream call takes. A
	// claim whose holder died expires after it.
	DefaultFillLock = 30 * time.Second
	// DefaultFillWait bounds how long a call waits for another replica's
	// result before calling the upstream itself.
	DefaultFillWait = 10 * time.Second
	// cacheOpTimeout bounds one cache operation, so that a slow cache cannot
	// hold a call up for long.
	cacheOpTimeout = time.Second
	// warnEvery spaces out the warnings of a cache that is down.
	warnEvery = 10 * time.Second
)

// WithResultCache reuses the successful results of the tools named in
// policies, keeping them in c. Each such tool's input schema gains the
// optional arguments "fresh" (bypass the cache) and "maxAgeSeconds" (accept
// only a result at most that old), and a result served from the cache carries
// "cached": true and "cachedAgeSeconds". Identical concurrent calls make one
// upstream call: within a process by joining it, across processes that share
// c by waiting (at most DefaultFillWait) for the result of the one that holds
// the key's lock. Failures are never cached.
func WithResultCache(c ResultCache, policies map[string]CachePolicy) Option {
	return func(r *Registry) {
		r.cache = c
		r.policies = map[string]CachePolicy{}
		for name, p := range policies {
			if p.TTL > 0 {
				r.policies[name] = p
			}
		}
	}
}

// resultCaching is a Registry's caching state, shared by registries made
// with Select.
type resultCaching struct {
	cache    ResultCache
	policies map[string]CachePolicy
	flights  *singleflight.Group
	lastWarn *atomic.Int64
	fillLock time.Duration
	fillWait time.Duration
}

// cacheable returns a copy of t whose schemas carry the cache arguments and
// result fields.
func cacheable(t *Tool) (*Tool, error) {
	if t.inputType == nil {
		return nil, fmt.Errorf("tool %s: a tool declared with NewRaw cannot be cached", t.Name())
	}
	fields := jsonFieldNames(t.inputType)
	for _, name := range []string{ArgFresh, ArgMaxAgeSeconds} {
		if slices.Contains(fields, name) {
			return nil, fmt.Errorf("tool %s: input field %q clashes with the cache argument", t.Name(), name)
		}
	}
	// The schemas with the cache fields are built on first use, like the
	// tool's own (see New).
	cp := *t
	cp.input = newLazyValidator(func() (*jsonschema.Schema, error) {
		if _, err := t.input.compiled(); err != nil {
			return nil, err
		}
		return cacheInputSchema(t.input.doc()), nil
	})
	cp.envelope = sync.OnceValue(func() *jsonschema.Schema { return cacheEnvelopeSchema(t.envelope()) })
	// The key names the output's shape, so that a deployment that changes it
	// does not read results of the old shape.
	cp.cacheVersion = sync.OnceValue(func() string {
		raw, _ := json.Marshal(t.output.doc())
		sum := sha256.Sum256(raw)
		return hex.EncodeToString(sum[:4])
	})
	return &cp, nil
}

// cacheInputSchema is a copy of a tool's input schema with the cache
// arguments added.
func cacheInputSchema(doc *jsonschema.Schema) *jsonschema.Schema {
	in := doc.CloneSchemas()
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{}
	}
	in.Properties[ArgFresh] = &jsonschema.Schema{Type: "boolean",
		Description: "Skip the cache: call the upstream now and refresh the cached result (default false)"}
	in.Properties[ArgMaxAgeSeconds] = &jsonschema.Schema{Type: "integer", Minimum: ptr(0.0), Maximum: ptr(float64(maxAgeLimit)),
		Description: "Accept a cached result only if it is at most this many seconds old; 0 is the same as fresh. Without it, results are reused for the tool's cache TTL"}
	if len(in.PropertyOrder) > 0 {
		in.PropertyOrder = append(in.PropertyOrder, ArgFresh, ArgMaxAgeSeconds)
	}
	return in
}

// cacheEnvelopeSchema is a copy of a tool's result schema with the cache
// fields added.
func cacheEnvelopeSchema(envelope *jsonschema.Schema) *jsonschema.Schema {
	env := envelope.CloneSchemas()
	env.Properties[FieldCached] = &jsonschema.Schema{Type: "boolean", Description: "Present and true when the result, or an upstream answer in it, came from the cache"}
	env.Properties[FieldCachedAge] = &jsonschema.Schema{Type: "integer", Minimum: ptr(0.0), Description: "How old the cached result (or the oldest cached answer in it) is, in seconds"}
	env.PropertyOrder = append(env.PropertyOrder, FieldCached, FieldCachedAge)
	return env
}

// cacheControl is what the cache arguments of one call ask.
type cacheControl struct {
	fresh  bool
	maxAge time.Duration // -1: not given
}

// splitCacheArgs takes the cache arguments out of validated arguments and
// returns the rest in a canonical form (keys sorted, compact), the cache key's
// basis.
func splitCacheArgs(args []byte) (cacheControl, []byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return cacheControl{}, nil, err
	}
	ctl := cacheControl{maxAge: -1}
	if raw, ok := m[ArgFresh]; ok {
		if err := json.Unmarshal(raw, &ctl.fresh); err != nil {
			return ctl, nil, err
		}
		delete(m, ArgFresh)
	}
	if raw, ok := m[ArgMaxAgeSeconds]; ok {
		var s float64
		if err := json.Unmarshal(raw, &s); err != nil {
			return ctl, nil, err
		}
		ctl.maxAge = time.Duration(s) * time.Second
		delete(m, ArgMaxAgeSeconds)
	}
	rest, err := json.Marshal(m)
	return ctl, rest, err
}

// cacheKey names a call's result: tool, output shape and arguments.
func cacheKey(t *Tool, canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "tool:" + t.Name() + ":" + t.cacheVersion() + ":" + hex.EncodeToString(sum[:])
}

// outcome is what one execution (or a cache read) produced.
type outcome struct {
	value   any
	retried bool
	cached  bool
	age     time.Duration
	body    []byte // the output's JSON, for a result read from the cache
	summary string // and its summary
}

// runCached answers a call of a cacheable tool from the cache when it may, and
// otherwise makes the one upstream call identical concurrent calls share.
func (r *Registry) runCached(ctx context.Context, t *Tool, pol CachePolicy, args []byte, res *Result) (any, error) {
	ctl, canonical, err := splitCacheArgs(args)
	if err != nil {
		return nil, &Error{Code: CodeValidation, Message: "arguments: " + err.Error(), Err: err}
	}
	key := cacheKey(t, canonical)
	maxAge := pol.TTL
	if ctl.maxAge >= 0 {
		maxAge = min(maxAge, ctl.maxAge)
	}
	if pol.InTool {
		if ctl.fresh {
			maxAge = 0
		}
		use := &inToolUse{maxAge: maxAge}
		out, err := r.execute(context.WithValue(ctx, inToolKey{}, use), t, canonical)
		res.Retried = out.retried
		if age, ok := use.oldest(); ok && err == nil {
			res.Cached, res.CachedAge = true, age
		}
		return out.value, err
	}
	if ctl.fresh || maxAge == 0 {
		out, err := r.execute(ctx, t, canonical)
		res.Retried = out.retried
		if err == nil {
			r.store(ctx, t, key, pol.TTL, out.value)
		}
		return out.value, err
	}
	if out, ok := r.lookup(ctx, t, key, maxAge); ok {
		res.Cached, res.CachedAge, res.cachedBody, res.cachedSummary = true, out.age, out.body, out.summary
		return out.value, nil
	}
	var led atomic.Bool // this call runs the flight: its error is its own
	ch := r.flights.DoChan(key, func() (any, error) {
		led.Store(true)
		out, err := r.fill(ctx, t, key, pol, maxAge, canonical)
		return out, err
	})
	var shared singleflight.Result
	select {
	case <-ctx.Done():
		return nil, &Error{Code: CodeTimeout, Message: "the call ended while waiting for an identical call's result", Retryable: true, Err: ctx.Err()}
	case shared = <-ch:
	}
	out, _ := shared.Val.(outcome)
	err = shared.Err
	if err != nil && !led.Load() && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The call this one joined was given up by its own caller: this
		// caller has not given up, so it calls for itself.
		out, err = r.execute(ctx, t, canonical)
		if err == nil {
			r.store(ctx, t, key, pol.TTL, out.value)
		}
	}
	res.Retried = out.retried
	if out.cached {
		res.Cached, res.CachedAge, res.cachedBody, res.cachedSummary = true, out.age, out.body, out.summary
	}
	return out.value, err
}

// fill gets one key's result for every caller in this process: from another
// replica that holds the key's lock (waiting a bounded time for it), or from
// the upstream, storing it.
func (r *Registry) fill(ctx context.Context, t *Tool, key string, pol CachePolicy, maxAge time.Duration, args []byte) (outcome, error) {
	lockKey := key + ":fill"
	release, locked, err := r.tryLock(ctx, lockKey)
	if err == nil && !locked {
		// Another replica is calling the upstream: poll for its result until
		// it is there, the lock is free again (its call failed: ours now), or
		// the wait is over.
		deadline := r.now().Add(r.fillWait)
		poll := 20 * time.Millisecond
		for !locked && err == nil && r.now().Before(deadline) {
			if httpclient.SleepCtx(ctx, poll) != nil {
				return outcome{}, ctx.Err()
			}
			poll = min(poll*2, 250*time.Millisecond)
			if out, ok := r.lookup(ctx, t, key, maxAge); ok {
				return out, nil
			}
			release, locked, err = r.tryLock(ctx, lockKey)
		}
	}
	if locked {
		defer release()
		// The holder before us may have stored its result and released the
		// lock since we last looked: read again rather than call twice.
		if out, ok := r.lookup(ctx, t, key, maxAge); ok {
			return out, nil
		}
	}
	out, err := r.execute(ctx, t, args)
	if err == nil {
		r.store(ctx, t, key, pol.TTL, out.value)
	}
	return out, err
}

// execute runs the tool, retrying a transient failure once.
func (r *Registry) execute(ctx context.Context, t *Tool, args []byte) (outcome, error) {
	var res Result
	v, err := r.retrying(ctx, t, args, &res)
	return outcome{value: v, retried: res.Retried}, err
}

func (r *Registry) tryLock(ctx context.Context, key string) (func(), bool, error) {
	cctx, cancel := context.WithTimeout(ctx, cacheOpTimeout)
	defer cancel()
	release, ok, err := r.cache.TryLock(cctx, key, r.fillLock)
	if err != nil {
		r.warnCache(ctx, "locking", err)
	}
	return release, ok, err
}

// lookup reads key and decodes the result if it is at most maxAge old.
func (r *Registry) lookup(ctx context.Context, t *Tool, key string, maxAge time.Duration) (outcome, bool) {
	cctx, cancel := context.WithTimeout(ctx, cacheOpTimeout)
	defer cancel()
	raw, ok, err := r.cache.Get(cctx, key)
	if err != nil {
		r.warnCache(ctx, "reading", err)
		return outcome{}, false
	}
	if !ok || len(raw) < 12 {
		return outcome{}, false
	}
	stored := time.UnixMilli(int64(binary.BigEndian.Uint64(raw[:8])))
	n := int(binary.BigEndian.Uint32(raw[8:12]))
	if n > 2*MaxSummaryBytes || len(raw) < 12+n || !utf8.Valid(raw[12:12+n]) {
		return outcome{}, false
	}
	summary := string(raw[12 : 12+n])
	age := max(r.now().Sub(stored), 0)
	if age > maxAge {
		return outcome{}, false
	}
	// The record was checked against the output schema when it was stored
	// (by this build or one with the same output schema: the key names
	// it). It is decoded into the output type and encoded again, not
	// checked again (that would cost as much as the call it saves): a
	// damaged record is a miss, and fields the type does not have are
	// dropped. The cache is trusted as the database is.
	v, err := t.decodeOutput(raw[12+n:])
	if err != nil {
		return outcome{}, false
	}
	body, err := Marshal(v)
	if err != nil {
		return outcome{}, false
	}
	return outcome{value: v, cached: true, age: age, body: body, summary: summary}, true
}

// store keeps a successful result that fits the output schema and the size
// bound: the time it was made (8 bytes, Unix milliseconds), its summary
// (4 bytes of length, then the text: outputs may make it from what their JSON
// does not carry), then its JSON.
func (r *Registry) store(ctx context.Context, t *Tool, key string, ttl time.Duration, value any) {
	body, err := Marshal(value)
	if err != nil || len(body) > MaxCachedResultBytes {
		return
	}
	var decoded any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&decoded) != nil {
		return
	}
	if vs, _ := t.output.check(decoded); len(vs) > 0 {
		return // the call fails its output check: nothing to reuse
	}
	if scrubbed, changed := r.scrubJSON(body); changed {
		body = scrubbed
	}
	summary := r.clipScrub(value.(Summarizer).Summary(), MaxSummaryBytes)
	rec := make([]byte, 12, 12+len(summary)+len(body))
	binary.BigEndian.PutUint64(rec, uint64(r.now().UnixMilli()))
	binary.BigEndian.PutUint32(rec[8:], uint32(len(summary)))
	rec = append(append(rec, summary...), body...)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheOpTimeout)
	defer cancel()
	if err := r.cache.Set(cctx, key, rec, ttl); err != nil {
		r.warnCache(ctx, "writing", err)
	}
}

// warnCache logs a cache failure, at most once per warnEvery: while a shared
// cache is down every call would otherwise log it.
func (r *Registry) warnCache(ctx context.Context, doing string, err error) {
	now := r.now().UnixNano()
	last := r.lastWarn.Load()
	if now-last < int64(warnEvery) || !r.lastWarn.CompareAndSwap(last, now) {
		return
	}
	r.logger.WarnContext(ctx, "result cache unavailable: calling upstreams without it", "doing", doing, "error", r.clipScrub(err.Error(), maxLogBytes))
}

// WithCacheFill sets how long a replica's claim to call the upstream for a
// key lasts (lock, DefaultFillLock) and how long other replicas wait for its
// result (wait, DefaultFillWait). Zero keeps a default.
func WithCacheFill(lock, wait time.Duration) Option {
	return func(r *Registry) {
		if lock > 0 {
			r.fillLock = lock
		}
		if wait > 0 {
			r.fillWait = wait
		}
	}
}

// inToolKey carries an [inToolUse] in the context of a call of a tool whose
// policy is InTool.
type inToolKey struct{}

// inToolUse is the cache age a call of an InTool tool accepts and the oldest
// cached answer it reported using.
type inToolUse struct {
	maxAge time.Duration
	mu     sync.Mutex
	used   bool
	age    time.Duration
}

func (u *inToolUse) report(age time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.used || age > u.age {
		u.used, u.age = true, max(age, 0)
	}
}

func (u *inToolUse) oldest() (time.Duration, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.age, u.used
}

// CacheMaxAge returns how old an upstream answer from its own cache the
// current call of an InTool tool (see [CachePolicy]) may use: the policy's
// TTL, lowered by the call's "maxAgeSeconds", and 0 (none) when it asked for
// "fresh". ok is false outside such a call (no cache configured): the tool
// then uses its own default.
func CacheMaxAge(ctx context.Context) (maxAge time.Duration, ok bool) {
	u, ok := ctx.Value(inToolKey{}).(*inToolUse)
	if !ok {
		return 0, false
	}
	return u.maxAge, true
}

// ReportCached tells the registry that the current call of an InTool tool
// used an upstream answer from its cache, age old. The result then carries
// "cached": true and, in "cachedAgeSeconds", the oldest age reported. It does
// nothing outside such a call.
func ReportCached(ctx context.Context, age time.Duration) {
	if u, ok := ctx.Value(inToolKey{}).(*inToolUse); ok {
		u.report(age)
	}
}
