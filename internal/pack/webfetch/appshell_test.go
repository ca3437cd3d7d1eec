package webfetch_test

import (
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/pack/webfetch"
)

func TestLooksLikeAppShell(t *testing.T) {
	long := strings.Repeat("Rivers carry water to the sea. ", 40)
	for _, tc := range []struct {
		name, html string
		want       bool
	}{
		{"app shell", appShell(""), true},
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
	f.Add([]byte(appShell("")))
	f.Add([]byte(article))
	f.Add([]byte("<noscript><noscript>javascript</noscript><script><style></script>"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if webfetch.LooksLikeAppShell(doc) != webfetch.LooksLikeAppShell(append([]byte(nil), doc...)) {
			t.Fatal("not deterministic")
		}
	})
}
