package webfetch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/internal/render/rendertest"
)

func TestLooksLikeAppShell(t *testing.T) {
	long := strings.Repeat("Rivers carry water to the sea. ", 40)
	for _, tc := range []struct {
		name, html string
		want       bool
	}{
		{"app shell", rendertest.AppShell(""), true},
		{"root div and a bundle", `<html><body><div id="app"></div><script src="/main.js"></script></body></html>`, true},
		{"noscript asks for JavaScript", `<html><body><p>Loading the catalogue…</p><noscript>Please enable JavaScript.</noscript></body></html>`, true},
		{"article", article, false},
		{"static page without scripts", `<html><body><p>Short page.</p></body></html>`, false},
		{"long page with scripts", `<html><body><p>` + long + `</p><script>track()</script></body></html>`, false},
		{"text in scripts is not shown", `<html><body><script>var s = "` + long + `"</script></body></html>`, true},
	} {
		if got := webfetch.LooksLikeAppShell([]byte(tc.html)); got != tc.want {
			t.Errorf("%s: looksLikeAppShell = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzLooksLikeAppShell: any bytes (a page is untrusted) are read without
// a panic, and the same bytes give the same answer.
func FuzzLooksLikeAppShell(f *testing.F) {
	f.Add([]byte(rendertest.AppShell("")))
	f.Add([]byte(article))
	f.Add([]byte("<noscript><noscript>javascript</noscript><script><style></script>"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if webfetch.LooksLikeAppShell(doc) != webfetch.LooksLikeAppShell(append([]byte(nil), doc...)) {
			t.Fatal("not deterministic")
		}
	})
}

func TestConfigFromEnvBrowser(t *testing.T) {
	load := func(env map[string]string) (webfetch.Config, error) {
		c, err := config.New(func(k string) string { return env[k] }, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return webfetch.ConfigFromEnv(c)
	}
	bin := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if cfg, err := load(map[string]string{"TOOLPORT_FETCH_BROWSER": bin}); err != nil || cfg.Render.ChromiumPath != bin {
		t.Errorf("TOOLPORT_FETCH_BROWSER=%s: %q, %v", bin, cfg.Render.ChromiumPath, err)
	}
	if cfg, err := load(nil); err != nil || cfg.Render.ChromiumPath != "" {
		t.Errorf("unset: rendering should be off: %q, %v", cfg.Render.ChromiumPath, err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-browser")
	if _, err := load(map[string]string{"TOOLPORT_FETCH_BROWSER": missing}); err == nil || !strings.Contains(err.Error(), "TOOLPORT_FETCH_BROWSER") {
		t.Errorf("a missing browser: err = %v, want one naming the variable", err)
	}
}
