package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cache"
	"github.com/toolport/toolport/internal/cache/redistest"
	"github.com/toolport/toolport/tool"
)

type benchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

type benchOut struct {
	Results []benchResult `json:"results"`
}

func (o benchOut) Summary() string { return fmt.Sprintf("%d results", len(o.Results)) }

// benchUpstream serves ten search results (about 3 KB) on loopback: the
// cheapest an upstream can be. A real one adds its network and processing
// time (tens to hundreds of milliseconds) to every uncached call.
func benchUpstream(b *testing.B) *httptest.Server {
	var out benchOut
	for i := range 10 {
		out.Results = append(out.Results, benchResult{
			Title: fmt.Sprintf("Result %d about the query", i), URL: fmt.Sprintf("https://example.org/page/%d", i),
			Snippet: "A snippet of some two hundred characters that describes the page the result points at, as search engines return them for each of their results, " + fmt.Sprint(i),
		})
	}
	body, _ := json.Marshal(out)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func benchTool(srv *httptest.Server) *tool.Tool {
	client := srv.Client()
	return tool.Must(tool.New(tool.Spec{Name: "search", Description: "Searches."}, func(ctx context.Context, in searchInput) (benchOut, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/search?q="+url.QueryEscape(in.Query), nil)
		resp, err := client.Do(req)
		if err != nil {
			return benchOut{}, err
		}
		defer resp.Body.Close()
		var out benchOut
		return out, json.NewDecoder(resp.Body).Decode(&out)
	}))
}

// BenchmarkResultCache compares one call answered by the upstream (loopback)
// with one answered by the in-process and the Redis cache, and measures a
// bare Redis GET of a result-sized value: the round trip a shared cache adds.
func BenchmarkResultCache(b *testing.B) {
	srv := benchUpstream(b)
	ctx := context.Background()
	args := []byte(`{"query":"semantic kernel"}`)
	policies := map[string]tool.CachePolicy{"search": {TTL: time.Hour}}
	run := func(b *testing.B, reg *tool.Registry, args []byte, wantCached bool) {
		if err := reg.Register(benchTool(srv)); err != nil {
			b.Fatal(err)
		}
		reg.Call(ctx, "search", args) // warm the connection and the cache
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if res := reg.Call(ctx, "search", args); !res.OK() || res.Cached != wantCached {
				b.Fatalf("cached=%v: %s", res.Cached, res)
			}
		}
	}
	b.Run("uncached", func(b *testing.B) { run(b, tool.NewRegistry(), args, false) })
	b.Run("cached/memory", func(b *testing.B) {
		run(b, tool.NewRegistry(tool.WithResultCache(cache.NewMemory(cache.MemoryConfig{}), policies)), args, true)
	})
	b.Run("cached/redis", func(b *testing.B) {
		client, prefix := redistest.Client(b)
		run(b, tool.NewRegistry(tool.WithResultCache(cache.NewRedis(client, cache.RedisConfig{Prefix: prefix}), policies)), args, true)
	})
	b.Run("fresh/redis", func(b *testing.B) { // upstream call plus the Redis write
		client, prefix := redistest.Client(b)
		run(b, tool.NewRegistry(tool.WithResultCache(cache.NewRedis(client, cache.RedisConfig{Prefix: prefix}), policies)),
			[]byte(`{"query":"semantic kernel","fresh":true}`), false)
	})
	b.Run("redis-get-3KB", func(b *testing.B) {
		client, prefix := redistest.Client(b)
		if err := client.Set(ctx, prefix+"v", make([]byte, 3<<10), time.Hour).Err(); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if err := client.Get(ctx, prefix+"v").Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
