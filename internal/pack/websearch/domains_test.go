package websearch

import (
	"strings"
	"testing"
)

func TestNormalizeDomain(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"example.com", "example.com", true},
		{" Example.COM ", "example.com", true},
		{"www.example.com", "example.com", true},
		{"*.example.com", "example.com", true},
		{".example.com.", "example.com", true},
		{"https://www.example.com/path?q=1", "example.com", true},
		{"http://user@example.com:8080", "example.com", true},
		{"www.com", "www.com", true}, // not reduced to a bare TLD
		{"münchen.de", "münchen.de", true},
		{"", "", false},
		{"   ", "", false},
		{"a b.com", "", false},
		{"a..com", "", false},
		{"https://", "", false},
		{strings.Repeat("a", 254), "", false},
	}
	for _, tt := range tests {
		got, ok := normalizeDomain(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("normalizeDomain(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDomainFilter(t *testing.T) {
	tests := []struct {
		allowed, blocked []string
		url              string
		want             bool
	}{
		{nil, nil, "https://anything.example/", true},
		{[]string{"example.com"}, nil, "https://example.com/a", true},
		{[]string{"example.com"}, nil, "https://www.example.com/a", true},
		{[]string{"example.com"}, nil, "https://docs.EXAMPLE.com./a", true},
		{[]string{"example.com"}, nil, "https://notexample.com/a", false},
		{[]string{"example.com"}, nil, "https://example.com.evil.test/a", false},
		{[]string{"www.example.com"}, nil, "https://example.com/", true},
		{[]string{"docs.example.com"}, nil, "https://example.com/", false},
		{[]string{"example.com"}, nil, "not a url", false},
		{nil, []string{"example.com"}, "not a url", true},
		{nil, []string{"example.com"}, "https://blog.example.com:8443/x", false},
		{nil, []string{"example.com"}, "https://example.org/", true},
		{[]string{"example.com"}, []string{"ads.example.com"}, "https://ads.example.com/", false},
		{[]string{"example.com"}, []string{"ads.example.com"}, "https://example.com/", true},
	}
	for _, tt := range tests {
		f, err := newDomainFilter(tt.allowed, tt.blocked)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.allows(tt.url); got != tt.want {
			t.Errorf("allowed=%v blocked=%v: allows(%q) = %v, want %v", tt.allowed, tt.blocked, tt.url, got, tt.want)
		}
	}
}

func TestDomainListsAreBounded(t *testing.T) {
	if _, err := newDomainFilter(make([]string, maxDomains+1), nil); err == nil {
		t.Error("an oversized list was accepted")
	}
}

// FuzzDomainFilter: normalisation is idempotent, and a normalised domain
// matches a URL on itself.
func FuzzDomainFilter(f *testing.F) {
	for _, s := range []string{"example.com", "https://www.Example.com:80/x", "*.a.b", "www.com", "[::1]:80", "münchen.de"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		d, ok := normalizeDomain(raw)
		if !ok {
			return
		}
		again, ok := normalizeDomain(d)
		if !ok || again != d {
			t.Fatalf("normalizeDomain(%q) = %q, then %q, %v", raw, d, again, ok)
		}
		f, err := newDomainFilter([]string{raw}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if h := hostOf("https://" + d + "/"); h == d && !f.allows("https://"+d+"/") {
			t.Fatalf("domain %q does not match its own URL", d)
		}
	})
}
