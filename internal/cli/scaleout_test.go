package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cache/redistest"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/tool"
)

// braveBody is a minimal web search answer. CONSTRUCTED from Brave's API
// reference (the web.results fields Toolport reads), not recorded.
const braveBody = `{"type":"search","query":{"original":"q","more_results_available":false},"web":{"type":"search","results":[{"title":"Result","url":"https://example.org/a","description":"About a."}]}}`

// fakeBrave counts the searches it answers.
func fakeBrave(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(braveBody))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// buildWith builds the CLI's registry from vars, as a replica would.
func buildWith(t *testing.T, vars map[string]string) (*tool.Registry, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{"TOOLPORT_DATABASE_URL": filepath.Join(dir, "toolport.db")}
	for k, v := range vars {
		all[k] = v
	}
	cfg, err := config.New(func(k string) string { return all[k] }, dir)
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	reg, closeReg, err := BuildRegistry(context.Background(), &Env{Stderr: &errb, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeReg)
	return reg, &errb
}

func search(t *testing.T, reg *tool.Registry, args string) map[string]any {
	t.Helper()
	res := reg.Call(context.Background(), "web_search_brave", []byte(args))
	if !res.OK() {
		t.Fatalf("web_search_brave %s: %s", args, res)
	}
	var env map[string]any
	_ = json.Unmarshal(res.JSON, &env)
	return env
}

// TestCachePoliciesNameTools: every tool named in the policy table exists, so
// that a renamed tool does not silently lose its cache.
func TestCachePoliciesNameTools(t *testing.T) {
	reg, _ := buildWith(t, map[string]string{"TOOLPORT_BRAVE_TOOLS": "all"})
	for name, p := range cachePolicies {
		tl, ok := reg.Lookup(name)
		if !ok {
			t.Errorf("cache policy for %q, which is not a tool", name)
			continue
		}
		if p.TTL <= 0 {
			t.Errorf("%s: TTL %v", name, p.TTL)
		}
		raw, _ := json.Marshal(tl.InputSchema())
		if !bytes.Contains(raw, []byte(`"maxAgeSeconds"`)) {
			t.Errorf("%s: input schema lacks maxAgeSeconds", name)
		}
	}
}

func TestResultCacheWiring(t *testing.T) {
	t.Run("in-process by default: a repeated search is one request", func(t *testing.T) {
		srv, n := fakeBrave(t)
		reg, _ := buildWith(t, map[string]string{"BRAVE_API_KEY": "k-123456", "BRAVE_API_BASE_URL": srv.URL})
		if env := search(t, reg, `{"query":"toolport"}`); env["cached"] != nil {
			t.Fatalf("first search cached: %v", env)
		}
		if env := search(t, reg, `{"query":"toolport"}`); env["cached"] != true {
			t.Fatalf("second search: %v", env)
		}
		if env := search(t, reg, `{"query":"toolport","fresh":true}`); env["cached"] != nil {
			t.Fatalf("fresh search: %v", env)
		}
		if n.Load() != 2 {
			t.Fatalf("%d requests to Brave, want 2 (first and fresh)", n.Load())
		}
	})
	t.Run("TOOLPORT_CACHE=off", func(t *testing.T) {
		srv, n := fakeBrave(t)
		reg, _ := buildWith(t, map[string]string{"BRAVE_API_KEY": "k-123456", "BRAVE_API_BASE_URL": srv.URL,
			"TOOLPORT_CACHE": "off", "TOOLPORT_BRAVE_RATE_LIMIT": "100:100"})
		search(t, reg, `{"query":"toolport"}`)
		search(t, reg, `{"query":"toolport"}`)
		if n.Load() != 2 {
			t.Fatalf("%d requests to Brave with the cache off", n.Load())
		}
		tl, _ := reg.Lookup("web_search_brave")
		if raw, _ := json.Marshal(tl.InputSchema()); bytes.Contains(raw, []byte("maxAgeSeconds")) {
			t.Fatal("cache arguments offered with the cache off")
		}
	})
	t.Run("Redis down: searches still work", func(t *testing.T) {
		srv, n := fakeBrave(t)
		reg, _ := buildWith(t, map[string]string{"BRAVE_API_KEY": "k-123456", "BRAVE_API_BASE_URL": srv.URL,
			"TOOLPORT_REDIS_URL": "redis://:hunter22pw@127.0.0.1:1/0"})
		for range 2 {
			if env := search(t, reg, `{"query":"toolport"}`); env["cached"] != nil {
				t.Fatalf("cached with Redis down: %v", env)
			}
		}
		if n.Load() != 2 {
			t.Fatalf("%d requests", n.Load())
		}
	})
	t.Run("bad settings fail at start, without the password", func(t *testing.T) {
		for k, v := range map[string]string{
			"TOOLPORT_CACHE":            "sometimes",
			"TOOLPORT_BRAVE_RATE_LIMIT": "fast",
			"TOOLPORT_TIDAL_RATE_LIMIT": "0",
			"TOOLPORT_REDIS_URL":        "http://:hunter22pw@127.0.0.1:6379",
		} {
			cfg, _ := config.New(func(name string) string {
				if name == k {
					return v
				}
				return ""
			}, t.TempDir())
			_, _, err := BuildRegistry(context.Background(), &Env{Stderr: &bytes.Buffer{}, Config: cfg})
			if err == nil || !strings.Contains(err.Error(), k) || strings.Contains(err.Error(), "hunter22pw") {
				t.Errorf("%s=%s: %v", k, v, err)
			}
		}
	})
}

// TestResultCacheAcrossReplicas: two registries built from the same
// TOOLPORT_REDIS_URL share results.
func TestResultCacheAcrossReplicas(t *testing.T) {
	url := redistest.URL(t)
	client, prefix := redistest.Client(t) // keys under prefix are deleted at the end
	srv, n := fakeBrave(t)
	q := "replicas"
	vars := map[string]string{"BRAVE_API_KEY": "k-123456", "BRAVE_API_BASE_URL": srv.URL,
		"TOOLPORT_REDIS_URL": url, "TOOLPORT_REDIS_PREFIX": prefix,
		"TOOLPORT_BRAVE_RATE_LIMIT": "0.1:1"} // the limiter's key then lives 11 s
	a, _ := buildWith(t, vars)
	b, _ := buildWith(t, vars)
	args, _ := json.Marshal(map[string]string{"query": q})
	search(t, a, string(args))
	if env := search(t, b, string(args)); env["cached"] != true {
		t.Fatalf("the second replica's search: %v", env)
	}
	if n.Load() != 1 {
		t.Fatalf("%d requests to Brave from two replicas", n.Load())
	}
	keys, err := client.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var sawCache, sawLimit bool
	for _, k := range keys {
		sawCache = sawCache || strings.HasPrefix(k, prefix+"cache:tool:web_search_brave:")
		sawLimit = sawLimit || strings.HasPrefix(k, prefix+"ratelimit:brave:")
	}
	if !sawCache || !sawLimit {
		t.Fatalf("keys under the replicas' prefix: %q; want the cached result and the Brave limiter's state", keys)
	}
}

func TestTurnStartPrecedenceSetting(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"", 0, false},
		{"150ms", 150 * time.Millisecond, false},
		{"off", -1, false},
		{"0", -1, false},
		{"-1s", 0, true},
		{"soon", 0, true},
		{"1m", 0, true},
	}
	for _, tt := range tests {
		st, err := turnSettings(func(name string) string {
			if name == "TOOLPORT_TURN_START_PRECEDENCE" {
				return tt.value
			}
			return ""
		})
		if tt.bad {
			if err == nil || !strings.Contains(err.Error(), "TOOLPORT_TURN_START_PRECEDENCE") {
				t.Errorf("%q: err = %v, want one naming the variable", tt.value, err)
			}
			continue
		}
		if err != nil || st.startPrecedence != tt.want {
			t.Errorf("%q: %v, %v; want %v", tt.value, st.startPrecedence, err, tt.want)
		}
	}
}
