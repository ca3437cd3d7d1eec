package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolport/toolport/internal/cache"
	"github.com/toolport/toolport/internal/cache/redistest"
	"github.com/toolport/toolport/tool"
)

// upstream is a tool's upstream that counts its calls.
type upstream struct {
	calls atomic.Int32
	fail  atomic.Int32 // the next fail calls fail
	// entered, when set, hears of each call as it reaches the upstream;
	// hold, when set, keeps each call there until it is closed. A test
	// holds a call in flight with them instead of a delay.
	entered chan struct{}
	hold    chan struct{}
}

func (u *upstream) tool(t *testing.T) *tool.Tool {
	return newSearch(t, func(ctx context.Context, in searchInput) (searchOutput, error) {
		n := u.calls.Add(1)
		if u.entered != nil {
			u.entered <- struct{}{}
		}
		if u.hold != nil {
			<-u.hold
		}
		if u.fail.Load() > 0 {
			u.fail.Add(-1)
			return searchOutput{}, &tool.Error{Code: tool.CodeAPI, Message: "upstream refused"}
		}
		return searchOutput{Echo: in, Total: int(n)}, nil
	})
}

func cachedRegistry(t *testing.T, c tool.ResultCache, u *upstream, opts ...tool.Option) *tool.Registry {
	t.Helper()
	opts = append([]tool.Option{tool.WithRetryDelay(time.Millisecond),
		tool.WithResultCache(c, map[string]tool.CachePolicy{"search": {TTL: time.Hour}})}, opts...)
	reg := tool.NewRegistry(opts...)
	if err := reg.Register(u.tool(t)); err != nil {
		t.Fatal(err)
	}
	return reg
}

// envelope decodes a result's JSON.
func envelope(t *testing.T, res *tool.Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.JSON, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestResultCache(t *testing.T) {
	ctx := context.Background()
	t.Run("a repeated call is answered from the cache, saying so", func(t *testing.T) {
		u := &upstream{}
		reg := cachedRegistry(t, cache.NewMemory(cache.MemoryConfig{}), u)
		first := reg.Call(ctx, "search", []byte(`{"query":"go","rows":3}`))
		if !first.OK() || first.Cached {
			t.Fatalf("first call: %s", first)
		}
		if _, has := envelope(t, first)["cached"]; has {
			t.Fatalf("an upstream result says cached: %s", first)
		}
		// The same arguments in another order and with the default spelled
		// out are the same call.
		second := reg.Call(ctx, "search", []byte(`{"sort":"asc","rows":3,"query":"go"}`))
		env := envelope(t, second)
		if !second.OK() || !second.Cached || env["cached"] != true || env["cachedAgeSeconds"] != 0.0 {
			t.Fatalf("second call: %s", second)
		}
		if env["total"] != 1.0 || second.Value.(searchOutput).Total != 1 {
			t.Fatalf("cached result is not the first one: %s", second)
		}
		if u.calls.Load() != 1 {
			t.Fatalf("%d upstream calls, want 1", u.calls.Load())
		}
		// Apart from the cache fields and the duration, a hit is the miss.
		a, b := envelope(t, first), env
		for _, k := range []string{"durationMs", "cached", "cachedAgeSeconds"} {
			delete(a, k)
			delete(b, k)
		}
		if ja, jb := fmt.Sprint(a), fmt.Sprint(b); ja != jb || first.Summary != second.Summary {
			t.Fatalf("hit differs from miss:\n%s\n%s", ja, jb)
		}
		if other := reg.Call(ctx, "search", []byte(`{"query":"go","rows":4}`)); other.Cached || u.calls.Load() != 2 {
			t.Fatalf("other arguments answered from the cache: %s", other)
		}
	})
	t.Run("fresh reaches the upstream and refreshes the cache", func(t *testing.T) {
		u := &upstream{}
		reg := cachedRegistry(t, cache.NewMemory(cache.MemoryConfig{}), u)
		reg.Call(ctx, "search", []byte(`{"query":"go"}`))
		fresh := reg.Call(ctx, "search", []byte(`{"query":"go","fresh":true}`))
		if !fresh.OK() || fresh.Cached || u.calls.Load() != 2 || fresh.Value.(searchOutput).Total != 2 {
			t.Fatalf("fresh call: %s after %d upstream calls", fresh, u.calls.Load())
		}
		if zero := reg.Call(ctx, "search", []byte(`{"query":"go","maxAgeSeconds":0}`)); zero.Cached || u.calls.Load() != 3 {
			t.Fatalf("maxAgeSeconds 0: %s", zero)
		}
		again := reg.Call(ctx, "search", []byte(`{"query":"go"}`))
		if !again.Cached || again.Value.(searchOutput).Total != 3 {
			t.Fatalf("after fresh calls the cache holds %s", again)
		}
	})
	t.Run("maxAgeSeconds bounds the age of a reused result", func(t *testing.T) {
		// In a synctest bubble the clock is fake: the 1.1 s sleep below
		// advances it at once instead of waiting out real time.
		synctest.Test(t, func(t *testing.T) {
			u := &upstream{}
			reg := cachedRegistry(t, cache.NewMemory(cache.MemoryConfig{}), u)
			reg.Call(ctx, "search", []byte(`{"query":"go"}`))
			time.Sleep(1100 * time.Millisecond) // fake time
			old := reg.Call(ctx, "search", []byte(`{"query":"go","maxAgeSeconds":60}`))
			if !old.Cached || envelope(t, old)["cachedAgeSeconds"] != 1.0 {
				t.Fatalf("maxAgeSeconds 60 after 1.1 s: %s", old)
			}
			if young := reg.Call(ctx, "search", []byte(`{"query":"go","maxAgeSeconds":1}`)); young.Cached || u.calls.Load() != 2 {
				t.Fatalf("maxAgeSeconds 1 after 1.1 s: %s", young)
			}
		})
	})
	t.Run("failures are not cached", func(t *testing.T) {
		u := &upstream{}
		u.fail.Store(1)
		reg := cachedRegistry(t, cache.NewMemory(cache.MemoryConfig{}), u)
		if res := reg.Call(ctx, "search", []byte(`{"query":"go"}`)); res.OK() {
			t.Fatalf("first call: %s", res)
		}
		if res := reg.Call(ctx, "search", []byte(`{"query":"go"}`)); !res.OK() || res.Cached || u.calls.Load() != 2 {
			t.Fatalf("after a failure: %s, %d upstream calls", res, u.calls.Load())
		}
	})
	t.Run("the cache arguments are in the schema and validated", func(t *testing.T) {
		u := &upstream{}
		reg := cachedRegistry(t, cache.NewMemory(cache.MemoryConfig{}), u)
		tl, _ := reg.Lookup("search")
		in, _ := json.Marshal(tl.InputSchema())
		out, _ := json.Marshal(tl.OutputSchema())
		for _, want := range []string{`"fresh":{`, `"maxAgeSeconds":{`, `"additionalProperties":false`} {
			if !bytes.Contains(in, []byte(want)) {
				t.Errorf("input schema lacks %s: %s", want, in)
			}
		}
		for _, want := range []string{`"cached":{`, `"cachedAgeSeconds":{`} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("output schema lacks %s: %s", want, out)
			}
		}
		for _, bad := range []string{`{"query":"go","maxAgeSeconds":-1}`, `{"query":"go","fresh":"yes"}`, `{"query":"go","stale":true}`} {
			if res := reg.Call(ctx, "search", []byte(bad)); res.OK() || res.Err.Code != tool.CodeValidation {
				t.Errorf("%s: %s", bad, res)
			}
		}
		if u.calls.Load() != 0 {
			t.Fatal("invalid calls reached the upstream")
		}
		plain := registry(t, newSearch(t, nil))
		if res := plain.Call(ctx, "search", []byte(`{"query":"go","fresh":true}`)); res.OK() {
			t.Fatalf("a tool without a cache policy accepted fresh: %s", res)
		}
	})
	t.Run("a result over the size bound is not kept", func(t *testing.T) {
		var calls atomic.Int32
		big := newSearch(t, func(_ context.Context, in searchInput) (searchOutput, error) {
			calls.Add(1)
			in.Query = strings.Repeat("x", tool.MaxCachedResultBytes)
			return searchOutput{Echo: in}, nil
		})
		reg := tool.NewRegistry(tool.WithResultCache(cache.NewMemory(cache.MemoryConfig{}), map[string]tool.CachePolicy{"search": {TTL: time.Hour}}))
		_ = reg.Register(big)
		reg.Call(ctx, "search", []byte(`{"query":"go"}`))
		if res := reg.Call(ctx, "search", []byte(`{"query":"go"}`)); !res.OK() || res.Cached || calls.Load() != 2 {
			t.Fatalf("oversized result reused: cached=%v, %d calls", res.Cached, calls.Load())
		}
	})
	t.Run("N identical concurrent calls make one upstream call", func(t *testing.T) {
		// The upstream call is held until every call has arrived and
		// blocked (synctest.Wait), so all twenty overlap it.
		synctest.Test(t, func(t *testing.T) {
			u := &upstream{hold: make(chan struct{})}
			reg := cachedRegistry(t, cache.NewMemory(cache.MemoryConfig{}), u)
			results := callConcurrently(t, 20, func() { synctest.Wait(); close(u.hold) }, reg)
			if n := u.calls.Load(); n != 1 {
				t.Fatalf("%d upstream calls for 20 identical concurrent calls", n)
			}
			for _, res := range results {
				if !res.OK() || res.Value.(searchOutput).Total != 1 {
					t.Fatalf("a joined call got %s", res)
				}
			}
		})
	})
}

// callConcurrently makes n identical calls at once, spread over regs, and
// runs meanwhile (which returns once they may finish) while they are under
// way.
func callConcurrently(t *testing.T, n int, meanwhile func(), regs ...*tool.Registry) []*tool.Result {
	t.Helper()
	results := make([]*tool.Result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = regs[i%len(regs)].Call(context.Background(), "search", []byte(`{"query":"shared"}`))
		})
	}
	close(start)
	meanwhile()
	wg.Wait()
	return results
}

// lockWatch wraps the caches of replicas to hear when one of them is
// refused a key's fill lock (another holds it) and to count the locks
// granted, so that a test orders replicas by what they did, not by time.
type lockWatch struct {
	refused chan struct{} // one send per refusal, dropped when full
	granted atomic.Int32
}

func newLockWatch() *lockWatch { return &lockWatch{refused: make(chan struct{}, 64)} }

func (w *lockWatch) wrap(c tool.ResultCache) tool.ResultCache { return watchedCache{c, w} }

type watchedCache struct {
	tool.ResultCache
	w *lockWatch
}

func (c watchedCache) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	release, ok, err := c.ResultCache.TryLock(ctx, key, ttl)
	switch {
	case ok:
		c.w.granted.Add(1)
	case err == nil:
		select {
		case c.w.refused <- struct{}{}:
		default:
		}
	}
	return release, ok, err
}

// TestResultCacheRedis: registries sharing one Redis (replicas) share results,
// and identical concurrent calls across them make one upstream call.
func TestResultCacheRedis(t *testing.T) {
	client, prefix := redistest.Client(t)
	shared := func() tool.ResultCache { return cache.NewRedis(client, cache.RedisConfig{Prefix: prefix}) }

	t.Run("a result made by one replica is reused by another", func(t *testing.T) {
		u := &upstream{}
		a, b := cachedRegistry(t, shared(), u), cachedRegistry(t, shared(), u)
		if res := a.Call(context.Background(), "search", []byte(`{"query":"one"}`)); !res.OK() || res.Cached {
			t.Fatalf("first: %s", res)
		}
		res := b.Call(context.Background(), "search", []byte(`{"query":"one"}`))
		if !res.OK() || !res.Cached || u.calls.Load() != 1 {
			t.Fatalf("second replica: %s, %d upstream calls", res, u.calls.Load())
		}
	})
	t.Run("concurrent identical calls on two replicas: one upstream call", func(t *testing.T) {
		u := &upstream{entered: make(chan struct{}, 20), hold: make(chan struct{})}
		watch := newLockWatch()
		// Each replica has its own upstream counter view but one upstream.
		a, b := cachedRegistry(t, watch.wrap(shared()), u), cachedRegistry(t, watch.wrap(shared()), u)
		results := callConcurrently(t, 20, func() {
			<-u.entered // one replica calls the upstream, holding the fill lock
			select {
			case <-watch.refused: // the other was refused it: it waits for the result
			case <-u.entered: // the other called the upstream too: the count below fails
			}
			close(u.hold)
		}, a, b)
		if n := u.calls.Load(); n != 1 {
			t.Fatalf("%d upstream calls for 20 identical calls across two replicas", n)
		}
		cached := 0
		for _, res := range results {
			if !res.OK() || res.Value.(searchOutput).Total != 1 {
				t.Fatalf("a call got %s", res)
			}
			if res.Cached {
				cached++
			}
		}
		if cached < 10 { // at least the other replica's ten read the first's result
			t.Fatalf("%d of 20 results came from the cache", cached)
		}
	})
	t.Run("a replica whose call failed frees the key for another", func(t *testing.T) {
		u := &upstream{entered: make(chan struct{}, 2), hold: make(chan struct{})}
		u.fail.Store(1) // the first call (API_ERROR is not retried)
		watch := newLockWatch()
		// a's lock would outlast b's wait: only a's release lets b have it.
		a := cachedRegistry(t, shared(), u, tool.WithRetryDelay(time.Millisecond), tool.WithCacheFill(time.Minute, 5*time.Second))
		b := cachedRegistry(t, watch.wrap(shared()), u, tool.WithCacheFill(5*time.Second, 5*time.Second))
		var ra, rb *tool.Result
		var wg sync.WaitGroup
		wg.Go(func() { ra = a.Call(context.Background(), "search", []byte(`{"query":"fails"}`)) })
		<-u.entered // a holds the lock, in the upstream
		wg.Go(func() { rb = b.Call(context.Background(), "search", []byte(`{"query":"fails"}`)) })
		<-watch.refused // b waits for a
		close(u.hold)   // a's call fails
		wg.Wait()
		if ra.OK() || !rb.OK() || rb.Cached {
			t.Fatalf("a: %s\nb: %s", ra, rb)
		}
		// Had a kept the lock, b would have called the upstream only after
		// the whole fill wait, without it.
		if watch.granted.Load() != 1 {
			t.Fatalf("b was granted the lock %d times, want once: a's failed call did not free it", watch.granted.Load())
		}
	})
}

// TestResultCacheDown: with the shared cache unreachable, calls still succeed
// (from the upstream) and the outage is logged as a warning.
func TestResultCacheDown(t *testing.T) {
	down, err := cache.OpenRedis("redis://127.0.0.1:1/0", cache.RedisConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	u := &upstream{}
	reg := cachedRegistry(t, down, u, tool.WithLogger(logger))
	for i := range 3 {
		res := reg.Call(context.Background(), "search", []byte(`{"query":"go"}`))
		if !res.OK() || res.Cached {
			t.Fatalf("call %d with the cache down: %s", i, res)
		}
	}
	if u.calls.Load() != 3 {
		t.Fatalf("%d upstream calls", u.calls.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "result cache unavailable"); n != 1 {
		t.Fatalf("%d warnings (want one, then quiet for a while):\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("errors logged: %s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A tool whose own input has a field named like a cache argument cannot be
// made cacheable.
func TestCacheArgumentClash(t *testing.T) {
	type in struct {
		Fresh bool `json:"fresh"`
	}
	tl := tool.Must(tool.New(tool.Spec{Name: "clash", Description: "d"}, func(context.Context, in) (searchOutput, error) {
		return searchOutput{}, nil
	}))
	reg := tool.NewRegistry(tool.WithResultCache(cache.NewMemory(cache.MemoryConfig{}), map[string]tool.CachePolicy{"clash": {TTL: time.Minute}}))
	if err := reg.Register(tl); err == nil || !strings.Contains(err.Error(), "fresh") {
		t.Fatalf("Register = %v", err)
	}
}

// hiddenOut makes its summary from a field its JSON does not carry, as some
// packs' outputs do.
type hiddenOut struct {
	Count int `json:"count"`
	query string
}

func (o hiddenOut) Summary() string { return fmt.Sprintf("%d for %q", o.Count, o.query) }

// A hit keeps the summary the call made, not one rebuilt from the JSON.
func TestCachedSummary(t *testing.T) {
	tl := tool.Must(tool.New(tool.Spec{Name: "hidden", Description: "d"}, func(_ context.Context, in searchInput) (hiddenOut, error) {
		return hiddenOut{Count: 2, query: in.Query}, nil
	}))
	reg := tool.NewRegistry(tool.WithResultCache(cache.NewMemory(cache.MemoryConfig{}), map[string]tool.CachePolicy{"hidden": {TTL: time.Hour}}))
	_ = reg.Register(tl)
	first := reg.Call(context.Background(), "hidden", []byte(`{"query":"jazz"}`))
	second := reg.Call(context.Background(), "hidden", []byte(`{"query":"jazz"}`))
	if !second.Cached || second.Summary != `2 for "jazz"` || first.Summary != second.Summary {
		t.Fatalf("summaries: %q then %q (cached=%v)", first.Summary, second.Summary, second.Cached)
	}
	if env := envelope(t, second); env["summary"] != `2 for "jazz"` {
		t.Fatalf("envelope: %s", second)
	}
}

// A replica waits for another's call at most the fill wait, then calls the
// upstream itself.
func TestResultCacheBoundedWait(t *testing.T) {
	// In a bubble the hung call blocks durably and the fill wait runs on the
	// fake clock, so no polling and no real 300 ms.
	synctest.Test(t, func(t *testing.T) {
		shared := cache.NewMemory(cache.MemoryConfig{}) // one store, two registries: two replicas
		release := make(chan struct{})
		var calls atomic.Int32
		slowThenFast := func(t *testing.T) *tool.Tool {
			return newSearch(t, func(_ context.Context, in searchInput) (searchOutput, error) {
				if calls.Add(1) == 1 {
					<-release // the first replica's call hangs
				}
				return searchOutput{Echo: in}, nil
			})
		}
		opts := func() []tool.Option {
			return []tool.Option{tool.WithResultCache(shared, map[string]tool.CachePolicy{"search": {TTL: time.Hour}}),
				tool.WithCacheFill(time.Minute, 300*time.Millisecond)}
		}
		a, b := tool.NewRegistry(opts()...), tool.NewRegistry(opts()...)
		_ = a.Register(slowThenFast(t))
		_ = b.Register(slowThenFast(t))
		done := make(chan *tool.Result, 1)
		go func() { done <- a.Call(context.Background(), "search", []byte(`{"query":"slow"}`)) }()
		synctest.Wait() // a's call now hangs in the tool, holding the fill lock
		if calls.Load() != 1 {
			t.Fatal("the first call never reached the tool")
		}
		start := time.Now()
		res := b.Call(context.Background(), "search", []byte(`{"query":"slow"}`))
		waited := time.Since(start)
		close(release)
		<-done
		if !res.OK() || res.Cached || calls.Load() != 2 {
			t.Fatalf("b: %s after %d upstream calls", res, calls.Load())
		}
		// The clock is fake, so b waits exactly the fill wait.
		if waited != 300*time.Millisecond {
			t.Fatalf("b waited %v for a hung call; want the 300ms fill wait", waited)
		}
	})
}

// A registry made with Select shares the cache of the one it came from.
func TestResultCacheSelect(t *testing.T) {
	u := &upstream{}
	reg := cachedRegistry(t, cache.NewMemory(cache.MemoryConfig{}), u)
	sub, err := reg.Select([]string{"test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg.Call(context.Background(), "search", []byte(`{"query":"go"}`))
	if res := sub.Call(context.Background(), "search", []byte(`{"query":"go","maxAgeSeconds":60}`)); !res.OK() || !res.Cached {
		t.Fatalf("selected registry: %s", res)
	}
}

// A call that joined another whose caller gave up calls the upstream itself.
func TestResultCacheLeaderGivesUp(t *testing.T) {
	// synctest.Wait returns once every goroutine is blocked, which orders the
	// leader, the joiner and the cancel without sleeps.
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		tl := newSearch(t, func(ctx context.Context, in searchInput) (searchOutput, error) {
			if calls.Add(1) == 1 {
				<-ctx.Done()
				return searchOutput{}, ctx.Err()
			}
			return searchOutput{Echo: in, Total: 7}, nil
		})
		reg := tool.NewRegistry(tool.WithRetryDelay(time.Millisecond),
			tool.WithResultCache(cache.NewMemory(cache.MemoryConfig{}), map[string]tool.CachePolicy{"search": {TTL: time.Hour}}))
		_ = reg.Register(tl)
		leaderCtx, cancel := context.WithCancel(context.Background())
		leader := make(chan *tool.Result, 1)
		go func() { leader <- reg.Call(leaderCtx, "search", []byte(`{"query":"xy"}`)) }()
		synctest.Wait() // the leader is in the tool
		if calls.Load() != 1 {
			t.Fatal("the first call never reached the tool")
		}
		joined := make(chan *tool.Result, 1)
		go func() { joined <- reg.Call(context.Background(), "search", []byte(`{"query":"xy"}`)) }()
		synctest.Wait() // the second call has joined the first and waits on it
		cancel()
		if res := <-leader; res.OK() {
			t.Fatalf("the cancelled call succeeded: %s", res)
		}
		if res := <-joined; !res.OK() || res.Value.(searchOutput).Total != 7 {
			t.Fatalf("the joined call: %s", res)
		}
	})
}

// handoffCache is a shared cache in which another replica holds a key's fill
// lock at the first try, and stores its result and releases the lock just
// before the second try succeeds.
type handoffCache struct {
	*cache.Memory
	tries   atomic.Int32
	between func()
}

func (c *handoffCache) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	switch c.tries.Add(1) {
	case 1:
		return nil, false, nil
	case 2:
		c.between()
	}
	return c.Memory.TryLock(ctx, key, ttl)
}

// A call that gets the fill lock after another replica released it reads
// the result that replica stored instead of calling the upstream again.
func TestResultCacheLockAfterAnotherReplicasFill(t *testing.T) {
	u := &upstream{}
	c := &handoffCache{Memory: cache.NewMemory(cache.MemoryConfig{})}
	a, b := cachedRegistry(t, c, u), cachedRegistry(t, c, u)
	c.between = func() {
		if res := b.Call(context.Background(), "search", []byte(`{"query":"handoff"}`)); !res.OK() {
			t.Errorf("the other replica's call: %s", res)
		}
	}
	res := a.Call(context.Background(), "search", []byte(`{"query":"handoff"}`))
	if !res.OK() || !res.Cached || u.calls.Load() != 1 {
		t.Fatalf("call = %s, cached %v, after %d upstream calls; want the other replica's result and one call", res, res.Cached, u.calls.Load())
	}
}

// TestInToolCache: a tool that caches its upstream reads itself gets the cache
// arguments and reports what it reused; the registry never reuses its whole
// result.
func TestInToolCache(t *testing.T) {
	ctx := context.Background()
	type seen struct {
		maxAge time.Duration
		ok     bool
	}
	var got []seen
	var reuseAge atomic.Int64 // <0: the tool reused nothing
	tl := newSearch(t, func(ctx context.Context, in searchInput) (searchOutput, error) {
		m, ok := tool.CacheMaxAge(ctx)
		got = append(got, seen{m, ok})
		if a := reuseAge.Load(); a >= 0 {
			tool.ReportCached(ctx, time.Duration(a))
			tool.ReportCached(ctx, time.Duration(a)/2) // the oldest answer wins
		}
		return searchOutput{Echo: in, Total: len(got)}, nil
	})
	reg := tool.NewRegistry(tool.WithResultCache(cache.NewMemory(cache.MemoryConfig{}),
		map[string]tool.CachePolicy{"search": {TTL: time.Hour, InTool: true}}))
	if err := reg.Register(tl); err != nil {
		t.Fatal(err)
	}
	if props := reg.Tools()[0].InputSchema().Properties; props["fresh"] == nil || props["maxAgeSeconds"] == nil {
		t.Fatalf("an InTool tool's schema lacks the cache arguments: %v", props)
	}
	tests := []struct {
		name       string
		args       string
		reused     time.Duration // -1: nothing reused
		wantMaxAge time.Duration
		wantCached bool
	}{
		{"without cache arguments the TTL applies", `{"query":"go"}`, -1, time.Hour, false},
		{"maxAgeSeconds lowers it", `{"query":"go","maxAgeSeconds":60}`, 40 * time.Second, time.Minute, true},
		{"maxAgeSeconds never raises it", `{"query":"go","maxAgeSeconds":86400}`, -1, time.Hour, false},
		{"fresh accepts nothing cached", `{"query":"go","fresh":true}`, -1, 0, false},
		{"a reused answer is reported with its age", `{"query":"go"}`, 125 * time.Second, time.Hour, true},
	}
	for i, tt := range tests {
		reuseAge.Store(int64(tt.reused))
		res := reg.Call(ctx, "search", []byte(tt.args))
		if !res.OK() {
			t.Fatalf("%s: %s", tt.name, res)
		}
		if len(got) != i+1 {
			t.Fatalf("%s: the tool ran %d times in %d calls: the registry reused a result", tt.name, len(got), i+1)
		}
		if s := got[i]; !s.ok || s.maxAge != tt.wantMaxAge {
			t.Errorf("%s: CacheMaxAge = %v, %v; want %v, true", tt.name, s.maxAge, s.ok, tt.wantMaxAge)
		}
		env := envelope(t, res)
		if tt.wantCached {
			if !res.Cached || env["cached"] != true || env["cachedAgeSeconds"] != float64(tt.reused/time.Second) {
				t.Errorf("%s: envelope %s, want cached and age %v", tt.name, res.JSON, tt.reused)
			}
		} else if res.Cached || env["cached"] != nil {
			t.Errorf("%s: nothing was reused but the result says cached: %s", tt.name, res.JSON)
		}
		if e := res.Value.(searchOutput).Echo; e.Query != "go" {
			t.Errorf("%s: the tool was given %+v", tt.name, e)
		}
	}
	// Outside such a call (no cache configured) the tool learns nothing.
	plain := registry(t, newSearch(t, func(ctx context.Context, in searchInput) (searchOutput, error) {
		if _, ok := tool.CacheMaxAge(ctx); ok {
			t.Error("CacheMaxAge ok outside an InTool call")
		}
		tool.ReportCached(ctx, time.Minute) // does nothing
		return searchOutput{Echo: in}, nil
	}))
	if res := plain.Call(ctx, "search", []byte(`{"query":"go"}`)); !res.OK() || res.Cached {
		t.Fatalf("plain call: %s", res)
	}
}
