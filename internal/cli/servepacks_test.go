package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/testexec"
)

// processConfig is the configuration of a toolport process whose whole
// environment is vars, with a fresh SQLite store unless vars names one.
func processConfig(t *testing.T, vars map[string]string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"TOOLPORT_DATABASE_URL": filepath.Join(dir, "toolport.db")}
	for k, v := range vars {
		env[k] = v
	}
	cfg, err := config.New(func(k string) string { return env[k] }, dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startServe runs `toolport serve` with the real packs, no upstream keys and
// args until it serves, and returns its base URL and stderr; it is stopped
// when the test ends. It returns the exit code instead if serve exits first.
func startServe(t *testing.T, vars map[string]string, args ...string) (base string, stderr *testexec.Buffer, code int) {
	t.Helper()
	cfg := processConfig(t, vars)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb testexec.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry},
			append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	}()
	deadline := time.After(time.Minute) // a hang guard, not a timing
	for {
		printed, changed := out.Next()
		if _, url, ok := strings.Cut(printed, "serving on "); ok {
			t.Cleanup(func() {
				cancel()
				if code := <-done; code != 0 {
					t.Errorf("serve exited %d\n%s", code, errb.String())
				}
			})
			return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(url), "/")), &errb, -1
		}
		select {
		case code := <-done:
			cancel()
			return "", &errb, code
		case <-deadline:
			cancel()
			t.Fatalf("serve did not start\n%s", errb.String())
		case <-changed:
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
}

func TestServeSelectsTools(t *testing.T) {
	t.Run("unknown pack", func(t *testing.T) {
		_, stderr, code := startServe(t, nil, "--packs", "web,nope")
		if code != cli.ExitUsage || !strings.Contains(stderr.String(), `unknown pack "nope"`) {
			t.Errorf("exit %d, want %d\n%s", code, cli.ExitUsage, stderr.String())
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		_, stderr, code := startServe(t, nil, "--tools", "web_fetch,nope")
		if code != cli.ExitUsage || !strings.Contains(stderr.String(), `unknown tool "nope"`) {
			t.Errorf("exit %d, want %d\n%s", code, cli.ExitUsage, stderr.String())
		}
	})

	type info struct {
		Tools        int
		OfferedTools []string
	}
	type tools struct {
		Tools []struct {
			Name, Pack, Unavailable string
			Offered                 bool
		}
	}
	t.Run("a pack without keys", func(t *testing.T) {
		base, stderr, _ := startServe(t, map[string]string{"TOOLPORT_GOOGLE_SEARCH": "on"}, "--packs", "web")
		var i info
		getJSON(t, base+"/api/info", &i)
		if !slices.Equal(i.OfferedTools, []string{"web_fetch"}) {
			t.Errorf("offered %v, want only web_fetch", i.OfferedTools)
		}
		var ts tools
		getJSON(t, base+"/api/tools", &ts)
		if len(ts.Tools) != i.Tools || len(ts.Tools) < 3 {
			t.Fatalf("/api/tools lists %d tools, /api/info counts %d", len(ts.Tools), i.Tools)
		}
		for _, tl := range ts.Tools {
			if tl.Pack != "web" {
				t.Errorf("%s of pack %s served with --packs web", tl.Name, tl.Pack)
			}
			if tl.Offered != (tl.Name == "web_fetch") || tl.Offered != (tl.Unavailable == "") {
				t.Errorf("%s: offered %v, unavailable %q", tl.Name, tl.Offered, tl.Unavailable)
			}
		}
		if s := stderr.String(); !strings.Contains(s, "not offered to the model (BRAVE_API_KEY is not set): web_search_brave") ||
			!strings.Contains(s, "GOOGLE_SEARCH_API_KEY and GOOGLE_SEARCH_ENGINE_ID are not set") {
			t.Errorf("stderr does not say what is not offered and why:\n%s", s)
		}
	})
	t.Run("a key", func(t *testing.T) {
		base, _, _ := startServe(t, map[string]string{"BRAVE_API_KEY": "k", "TOOLPORT_BRAVE_TOOLS": "web"},
			"--tools", "web_search_brave,web_fetch,semanticSearch,tidalSearch")
		var i info
		getJSON(t, base+"/api/info", &i)
		if i.Tools != 4 || !slices.Equal(i.OfferedTools, []string{"web_search_brave", "web_fetch", "semanticSearch"}) {
			t.Errorf("/api/info: %+v", i)
		}
	})
	t.Run("--offer-unconfigured", func(t *testing.T) {
		base, stderr, _ := startServe(t, nil, "--packs", "music", "--offer-unconfigured")
		var i info
		getJSON(t, base+"/api/info", &i)
		if i.Tools == 0 || len(i.OfferedTools) != i.Tools {
			t.Errorf("/api/info: %+v", i)
		}
		if strings.Contains(stderr.String(), "not offered") {
			t.Errorf("stderr: %s", stderr.String())
		}
	})
}
