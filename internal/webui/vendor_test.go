package webui

import (
	"bytes"
	"os"
	"testing"

	"github.com/toolport/toolport/internal/testexec"
)

// TestVendoredHighlighterIsUnmodified: the page's highlight.js and its
// licence are the npm package's files (pinned in testdata/npm/package.json),
// byte for byte.
func TestVendoredHighlighterIsUnmodified(t *testing.T) {
	for vendored, pkg := range map[string]string{
		"static/vendor/highlight.min.js":         "@highlightjs/cdn-assets/es/highlight.min.js",
		"static/vendor/highlight.js-LICENSE.txt": "@highlightjs/cdn-assets/LICENSE",
	} {
		want, err := os.ReadFile(testexec.NPMFile(t, pkg))
		if err != nil {
			t.Fatal(err)
		}
		got, err := staticFS.ReadFile(vendored)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the npm package's %s: copy it again from there", vendored, pkg)
		}
	}
}
