package tooltest

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixturePath returns the path of a recorded fixture, <module root>/pkg/testdata/name,
// where pkg is a slash-separated package directory such as "tidal" or
// "internal/pack/music". It fails the test when the file does not exist, so
// a renamed recording shows up as a clear message rather than a confusing
// decode error.
func fixturePath(t testing.TB, pkg, name string) string {
	t.Helper()
	p := filepath.Join(Root(t), filepath.FromSlash(pkg), "testdata", filepath.FromSlash(name))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tooltest: fixture %s/testdata/%s: %v", pkg, name, err)
	}
	return p
}

// Fixture returns the bytes of the recorded fixture pkg/testdata/name (see
// fixturePath), byte for byte.
func Fixture(t testing.TB, pkg, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixturePath(t, pkg, name))
	if err != nil {
		t.Fatalf("tooltest: fixture %s/testdata/%s: %v", pkg, name, err)
	}
	return b
}

// Fixtures returns the bodies of every fixture in pkg/testdata matching the
// glob pattern (filepath.Match syntax, e.g. "*/*.json*"), in lexical order of
// their paths. Fuzz tests seed their corpora with it; it fails when nothing
// matches, because a seed corpus that silently went empty tests nothing.
func Fixtures(t testing.TB, pkg, pattern string) [][]byte {
	t.Helper()
	dir := filepath.Join(Root(t), filepath.FromSlash(pkg), "testdata")
	paths, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pattern)))
	if err != nil {
		t.Fatalf("tooltest: fixtures %s/testdata/%s: %v", pkg, pattern, err)
	}
	if len(paths) == 0 {
		t.Fatalf("tooltest: no fixture matches %s/testdata/%s", pkg, pattern)
	}
	out := make([][]byte, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("tooltest: %v", err)
		}
		out = append(out, b)
	}
	return out
}

// HeaderFixture reads a recorded header file: one "Name: value" per line,
// lines without a colon ignored (such as an HTTP status line).
func HeaderFixture(t testing.TB, pkg, name string) http.Header {
	t.Helper()
	h := http.Header{}
	sc := bufio.NewScanner(bytes.NewReader(Fixture(t, pkg, name)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return h
}

// StripJSONComments removes // comments outside strings, so that a
// recording annotated as JSONC parses as JSON. Line breaks are kept, so
// decode errors still point at the right line.
func StripJSONComments(b []byte) []byte {
	var out bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			out.WriteByte(c)
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out.WriteByte(c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out.WriteByte('\n')
			}
		default:
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// JSONFixture is Fixture for recorded JSON answers: a .jsonc recording
// (JSON annotated with // comments) comes back with its comments stripped,
// so that it parses as JSON; any other file comes back as it is.
func JSONFixture(t testing.TB, pkg, name string) []byte {
	t.Helper()
	b := Fixture(t, pkg, name)
	if strings.HasSuffix(name, ".jsonc") {
		b = StripJSONComments(b)
	}
	return b
}
