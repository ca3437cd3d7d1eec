package cache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolport/toolport/internal/cache"
	"github.com/toolport/toolport/internal/cache/redistest"
)

// implementations returns each Cache under test: the in-process one, and the
// Redis one when TOOLPORT_TEST_REDIS_URL is set. Each comes with a wait that
// lets d pass for it: the in-process cache runs on an injected clock that
// wait moves, so expiry tests take no real time; Redis expires keys on the
// server's own clock, so there wait has to sleep.
func implementations(t *testing.T) map[string]func(t *testing.T, maxValue int) (cache.Cache, func(d time.Duration)) {
	return map[string]func(t *testing.T, maxValue int) (cache.Cache, func(d time.Duration)){
		"memory": func(t *testing.T, maxValue int) (cache.Cache, func(d time.Duration)) {
			start := time.Now()
			var elapsed atomic.Int64 // the fake clock: start plus elapsed
			now := func() time.Time { return start.Add(time.Duration(elapsed.Load())) }
			wait := func(d time.Duration) { elapsed.Add(int64(d)) }
			return cache.NewMemory(cache.MemoryConfig{MaxValueBytes: maxValue, Now: now}), wait
		},
		"redis": func(t *testing.T, maxValue int) (cache.Cache, func(d time.Duration)) {
			c, prefix := redistest.Client(t)
			return cache.NewRedis(c, cache.RedisConfig{Prefix: prefix, MaxValueBytes: maxValue}), time.Sleep
		},
	}
}

// TestContract holds both implementations to what Cache promises.
func TestContract(t *testing.T) {
	ctx := context.Background()
	for name, open := range implementations(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("a stored value is read back until its TTL ends", func(t *testing.T) {
				c, wait := open(t, 0)
				if _, ok, err := c.Get(ctx, "k"); ok || err != nil {
					t.Fatalf("empty cache: ok=%v err=%v", ok, err)
				}
				if err := c.Set(ctx, "k", []byte("v1"), 150*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				if v, ok, err := c.Get(ctx, "k"); !ok || err != nil || string(v) != "v1" {
					t.Fatalf("Get = %q %v %v", v, ok, err)
				}
				deadline := time.Now().Add(3 * time.Second)
				for {
					_, ok, err := c.Get(ctx, "k")
					if err != nil {
						t.Fatal(err)
					}
					if !ok {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("value still there 3 s after a 150 ms TTL")
					}
					wait(20 * time.Millisecond)
				}
			})
			t.Run("Set replaces and Delete removes", func(t *testing.T) {
				c, _ := open(t, 0)
				_ = c.Set(ctx, "k", []byte("a"), time.Minute)
				_ = c.Set(ctx, "k", []byte("b"), time.Minute)
				if v, _, _ := c.Get(ctx, "k"); string(v) != "b" {
					t.Fatalf("after replace: %q", v)
				}
				if err := c.Delete(ctx, "k"); err != nil {
					t.Fatal(err)
				}
				if _, ok, _ := c.Get(ctx, "k"); ok {
					t.Fatal("deleted value still there")
				}
			})
			t.Run("a value over the bound is refused", func(t *testing.T) {
				c, _ := open(t, 10)
				if err := c.Set(ctx, "big", bytes.Repeat([]byte("x"), 11), time.Minute); !errors.Is(err, cache.ErrTooLarge) {
					t.Fatalf("Set 11 bytes with a 10-byte bound: %v", err)
				}
				if _, ok, _ := c.Get(ctx, "big"); ok {
					t.Fatal("refused value stored")
				}
				if err := c.Set(ctx, "ok", bytes.Repeat([]byte("x"), 10), time.Minute); err != nil {
					t.Fatalf("Set 10 bytes: %v", err)
				}
			})
			t.Run("a lock has one holder until released or expired", func(t *testing.T) {
				c, wait := open(t, 0)
				release, ok, err := c.TryLock(ctx, "l", time.Minute)
				if !ok || err != nil {
					t.Fatalf("first TryLock: %v %v", ok, err)
				}
				if _, ok, _ := c.TryLock(ctx, "l", time.Minute); ok {
					t.Fatal("second TryLock got a held lock")
				}
				release()
				release2, ok, _ := c.TryLock(ctx, "l", 100*time.Millisecond)
				if !ok {
					t.Fatal("TryLock after release failed")
				}
				wait(250 * time.Millisecond)
				release3, ok, _ := c.TryLock(ctx, "l", time.Minute)
				if !ok {
					t.Fatal("TryLock after expiry failed")
				}
				release2() // expired: must not free the new holder's lock
				if _, ok, _ := c.TryLock(ctx, "l", time.Minute); ok {
					t.Fatal("an expired holder's release freed the next holder's lock")
				}
				release3()
			})
			t.Run("concurrent TryLock: exactly one winner", func(t *testing.T) {
				c, _ := open(t, 0)
				var wins atomic.Int32
				var wg sync.WaitGroup
				for range 20 {
					wg.Go(func() {
						if _, ok, err := c.TryLock(ctx, "race", time.Minute); ok && err == nil {
							wins.Add(1)
						}
					})
				}
				wg.Wait()
				if wins.Load() != 1 {
					t.Fatalf("%d winners", wins.Load())
				}
			})
		})
	}
}

func TestMemoryBounds(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }

	t.Run("entries: the least recently used goes first", func(t *testing.T) {
		m := cache.NewMemory(cache.MemoryConfig{MaxEntries: 3, Now: clock})
		for _, k := range []string{"a", "b", "c"} {
			_ = m.Set(ctx, k, []byte(k), time.Hour)
		}
		m.Get(ctx, "a") // a is now the most recently used: b is the oldest
		_ = m.Set(ctx, "d", []byte("d"), time.Hour)
		for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
			if _, ok, _ := m.Get(ctx, k); ok != want {
				t.Errorf("%s present = %v, want %v", k, ok, want)
			}
		}
		if n, _ := m.Len(); n != 3 {
			t.Errorf("Len = %d", n)
		}
	})
	t.Run("bytes: eviction until the total fits", func(t *testing.T) {
		m := cache.NewMemory(cache.MemoryConfig{MaxBytes: 100, Now: clock})
		for i := range 10 {
			_ = m.Set(ctx, fmt.Sprintf("k%d", i), bytes.Repeat([]byte("x"), 18), time.Hour) // 20 bytes each
		}
		n, size := m.Len()
		if n != 5 || size != 100 {
			t.Fatalf("Len = %d entries, %d bytes; want 5, 100", n, size)
		}
		if _, ok, _ := m.Get(ctx, "k9"); !ok {
			t.Error("newest entry evicted")
		}
		if _, ok, _ := m.Get(ctx, "k0"); ok {
			t.Error("oldest entry kept")
		}
	})
	t.Run("expired entries are evicted before live ones", func(t *testing.T) {
		m := cache.NewMemory(cache.MemoryConfig{MaxEntries: 2, Now: clock})
		_ = m.Set(ctx, "live", []byte("1"), time.Hour)
		_ = m.Set(ctx, "short", []byte("2"), time.Second)
		now = now.Add(2 * time.Second)
		_ = m.Set(ctx, "new", []byte("3"), time.Hour)
		if _, ok, _ := m.Get(ctx, "live"); !ok {
			t.Error("a live entry was evicted while an expired one was there")
		}
	})
	t.Run("TTL follows the clock", func(t *testing.T) {
		m := cache.NewMemory(cache.MemoryConfig{Now: clock})
		_ = m.Set(ctx, "k", []byte("v"), time.Minute)
		now = now.Add(59 * time.Second)
		if _, ok, _ := m.Get(ctx, "k"); !ok {
			t.Fatal("expired early")
		}
		now = now.Add(time.Second)
		if _, ok, _ := m.Get(ctx, "k"); ok {
			t.Fatal("not expired at its TTL")
		}
		if n, size := m.Len(); n != 0 || size != 0 {
			t.Fatalf("expired entry still counted: %d, %d", n, size)
		}
	})
	t.Run("a returned value is a copy", func(t *testing.T) {
		m := cache.NewMemory(cache.MemoryConfig{})
		v := []byte("abc")
		_ = m.Set(ctx, "k", v, time.Minute)
		v[0] = 'X'
		got, _, _ := m.Get(ctx, "k")
		got[1] = 'Y'
		if again, _, _ := m.Get(ctx, "k"); string(again) != "abc" {
			t.Fatalf("stored value changed to %q", again)
		}
	})
}

// TestRedisOutage: an unreachable Redis answers ErrUnavailable quickly, and
// during the back-off without dialling again.
func TestRedisOutage(t *testing.T) {
	ctx := context.Background()
	opt, err := cache.ParseRedisURL("redis://127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	client := redis.NewClient(opt)
	client.AddHook(dialCounter{&dials})
	c := cache.NewRedis(client, cache.RedisConfig{Backoff: time.Hour})
	defer c.Close()

	start := time.Now()
	if _, _, err := c.Get(ctx, "k"); !errors.Is(err, cache.ErrUnavailable) {
		t.Fatalf("Get with Redis down: %v", err)
	}
	if err := c.Set(ctx, "k", []byte("v"), time.Minute); !errors.Is(err, cache.ErrUnavailable) {
		t.Fatalf("Set with Redis down: %v", err)
	}
	if _, ok, err := c.TryLock(ctx, "k", time.Minute); ok || !errors.Is(err, cache.ErrUnavailable) {
		t.Fatalf("TryLock with Redis down: %v %v", ok, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("three calls to a down Redis took %v", d)
	}
	if n := dials.Load(); n == 0 || n > 2 {
		t.Fatalf("%d dials: want the first call's only (one retry at most), then the back-off", n)
	}
	if err := c.Ping(ctx); err == nil {
		t.Fatal("Ping of a down Redis succeeded")
	}
}

func TestParseRedisURLHidesPassword(t *testing.T) {
	_, err := cache.ParseRedisURL("http://user:s3cretpw@host:6379/0")
	if err == nil {
		t.Fatal("http:// accepted")
	}
	if bytes.Contains([]byte(err.Error()), []byte("s3cretpw")) {
		t.Fatalf("error quotes the password: %v", err)
	}
	if _, err := cache.ParseRedisURL("redis://:pw@127.0.0.1:6379/2"); err != nil {
		t.Fatalf("valid URL: %v", err)
	}
}

// dialCounter counts connection attempts.
type dialCounter struct{ n *atomic.Int32 }

func (d dialCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d.n.Add(1)
		return next(ctx, network, addr)
	}
}
func (dialCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (dialCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
