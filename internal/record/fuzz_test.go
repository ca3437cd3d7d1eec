package record

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"recorded":"2026-11-24T12:00:00Z","toolportVersion":"v1","exchanges":[{"upstream":"brave","method":"GET","host":"h","path":"/res/v1/web/search","query":"q=x","status":200,"body":"brave/001-get-x.json","headers":"brave/001-get-x.headers.txt","durationMs":3}]}`))
	f.Add([]byte(`{"format":1,"exchanges":[{"method":"GET","path":"/","error":"dial tcp: refused","durationMs":0}]}`))
	f.Add([]byte(`{"format":1,"exchanges":[{"method":"GET","path":"/","status":200,"body":"a/../../b"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := ParseManifest(raw)
		if err != nil {
			return
		}
		for _, ex := range m.Exchanges {
			for _, rel := range []string{ex.Body, ex.Headers} {
				if rel == "" {
					continue
				}
				p, err := within("/rec", rel)
				if err != nil || !strings.HasPrefix(p, "/rec/") {
					t.Fatalf("accepted file %q resolves to %q (%v)", rel, p, err)
				}
			}
		}
	})
}

func FuzzParseHeaders(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\nContent-Type: application/json\nX-RateLimit-Remaining: 1, 2\n"))
	f.Add([]byte("no colon\n:\n a : b\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for k := range ParseHeaders(raw) {
			if k == "" || strings.ContainsAny(k, " \t\n") {
				t.Fatalf("bad header name %q", k)
			}
		}
	})
}

// FuzzScrub checks the scrubber's promise on arbitrary bodies: whatever the
// bytes around them, known secrets never survive, raw or JSON-escaped, even
// where the marker written for one spells another with its neighbours.
func FuzzScrub(f *testing.F) {
	f.Add([]byte(`{"a":"xx-secret-value-xx"}`), "secret-value", "")
	f.Add([]byte(`{"a":"\u0073ecret-value","b":"\"}`), "secret-value", "")
	f.Add([]byte(`"\\"secret-value"`), "secret-value", "")
	f.Add([]byte(`RHN1SQsuI`), "DsuI", "")
	f.Add([]byte(`D000000`), "D000", "")
	f.Add([]byte(`]000000`), "]000", "")
	f.Add([]byte(`XXN1SQsuI`), "]suI", "")
	f.Add([]byte(`<xyz12345aaaa>`), "xyz12345[RED", "aaaa")
	f.Add([]byte(`[xyz12345aaaa]`), "xyz12345RED", "aaaa")
	f.Fuzz(func(t *testing.T, body []byte, secret, other string) {
		var secrets []string
		for _, v := range []string{secret, other} {
			// Add drops short values and those within the marker itself.
			if len(v) >= MinSecretLen && strings.TrimSpace(v) == v && !strings.Contains(Redacted, v) {
				secrets = append(secrets, v)
			}
		}
		if len(secrets) == 0 {
			return
		}
		out := NewScrubber(secrets...).Bytes(body)
		for _, v := range secrets {
			if bytes.Contains(out, []byte(v)) {
				t.Fatalf("secret %q survives in %q", v, out)
			}
		}
	})
}

// FuzzCover checks the hand-written automaton against plain search: the
// stretches it covers are exactly the union of every occurrence of every
// secret, overlapping ones merged.
func FuzzCover(f *testing.F) {
	f.Add([]byte("xxabcdefghyy abcd"), "abcd", "cdefgh", "bc")
	f.Add([]byte("aaaaaaa"), "aa", "aaa", "a")
	f.Add([]byte("she sells his hers"), "he", "she", "hers")
	f.Fuzz(func(t *testing.T, text []byte, a, b, c string) {
		var secrets []string
		for _, v := range []string{a, b, c} {
			if v != "" {
				secrets = append(secrets, v)
			}
		}
		if len(secrets) == 0 {
			return
		}
		covered := make([]bool, len(text))
		for _, sec := range secrets {
			for i := 0; i+len(sec) <= len(text); i++ {
				if string(text[i:i+len(sec)]) == sec {
					for j := i; j < i+len(sec); j++ {
						covered[j] = true
					}
				}
			}
		}
		var steps int
		got := make([]bool, len(text))
		last := -1
		for _, sp := range newMatcher(secrets).cover(text, &steps) {
			if sp.start <= last || sp.end <= sp.start {
				t.Fatalf("stretches out of order or overlapping at %v", sp)
			}
			last = sp.end - 1
			for j := sp.start; j < sp.end; j++ {
				got[j] = true
			}
		}
		if !slices.Equal(got, covered) {
			t.Fatalf("covered %v, want %v", got, covered)
		}
		if longest := len(slices.MaxFunc(secrets, func(x, y string) int { return len(x) - len(y) })); steps > 2*len(text)+longest {
			t.Fatalf("%d transitions for %d bytes", steps, len(text))
		}
	})
}
