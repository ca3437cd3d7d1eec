package httpclient

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/textclip"
)

func TestParseBaseURL(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"https://api.search.brave.com", "https://api.search.brave.com", ""},
		{"  http://127.0.0.1:8080/ckan/  ", "http://127.0.0.1:8080/ckan", ""},
		{"https://openapi.tidal.com/v2//", "https://openapi.tidal.com/v2", ""},
		{"https://host/a%2Fb", "https://host/a/b", ""}, // the decoded path is kept, escaping is re-derived
		{"ftp://example.org", "", `scheme must be http or https, got "ftp"`},
		{"example.org", "", `scheme must be http or https, got ""`},
		{"https://", "", "no host"},
		{"https://:443", "", "no host"},
		{"https://user:secret@example.org", "", "credentials in the URL are not allowed"},
		{"https://example.org/?key=secret", "", "no query or fragment"},
		{"https://example.org/?", "", "no query or fragment"},
		{"https://example.org/#x", "", "no query or fragment"},
		{"http://[::1", "", "missing ']' in host"},
		{"http://exa mple.org/secret", "", "invalid character"},
	}
	for _, tt := range tests {
		u, err := ParseBaseURL(tt.in)
		if tt.err != "" {
			var be *BaseURLError
			if err == nil || !errors.Is(err, ErrBaseURL) || !errors.As(err, &be) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseBaseURL(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "mple.org")) {
				t.Errorf("ParseBaseURL(%q) error repeats the URL: %v", tt.in, err)
			}
			continue
		}
		if err != nil || u.String() != tt.want {
			t.Errorf("ParseBaseURL(%q) = %v, %v; want %s", tt.in, u, err, tt.want)
		}
	}
}

func TestWithPath(t *testing.T) {
	base, err := ParseBaseURL("https://data.gov.il/api/3")
	if err != nil {
		t.Fatal(err)
	}
	got := WithPath(base, "/action/package_search")
	if got.String() != "https://data.gov.il/api/3/action/package_search" {
		t.Errorf("WithPath = %s", got)
	}
	if base.String() != "https://data.gov.il/api/3" {
		t.Errorf("WithPath changed base to %s", base)
	}
	root, _ := ParseBaseURL("http://127.0.0.1:1/")
	if got := WithPath(root, "/res/v1/web/search").String(); got != "http://127.0.0.1:1/res/v1/web/search" {
		t.Errorf("WithPath on a bare host = %s", got)
	}
	// No cleaning: a ".." in a path stays what it is, it does not climb.
	if got := WithPath(base, "/a/../b").Path; got != "/api/3/a/../b" {
		t.Errorf("WithPath cleaned the path to %s", got)
	}
}

func TestReadBody(t *testing.T) {
	tests := []struct {
		body    string
		limit   int64
		want    string
		tooBig  bool
		message string
	}{
		{"", 10, "", false, ""},
		{"0123456789", 10, "0123456789", false, ""}, // exactly the limit is fine
		{"0123456789a", 10, "", true, "response body too large (over 10 bytes)"},
		{"x", 0, "", true, "over 0 bytes"},
		{"x", -5, "", true, "over 0 bytes"},
	}
	for _, tt := range tests {
		got, err := ReadBody(strings.NewReader(tt.body), tt.limit)
		if tt.tooBig {
			if !errors.Is(err, ErrBodyTooLarge) || !strings.Contains(err.Error(), tt.message) || got != nil {
				t.Errorf("ReadBody(%q, %d) = %q, %v; want ErrBodyTooLarge", tt.body, tt.limit, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("ReadBody(%q, %d) = %q, %v", tt.body, tt.limit, got, err)
		}
	}
	// A read error is returned, not mistaken for a short body.
	boom := errors.New("connection reset")
	if _, err := ReadBody(iotest.ErrReader(boom), 10); !errors.Is(err, boom) {
		t.Errorf("read error = %v", err)
	}
	// It stops reading one byte past the limit: an endless body ends.
	if _, err := ReadBody(endless{}, 1<<10); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("endless body: %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	const limit = time.Hour
	tests := []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"   ", 0},
		{"0", 0},
		{"-5", 0},
		{"120", 2 * time.Minute},
		{" 7 ", 7 * time.Second},
		{"+3", 3 * time.Second},
		{"3600", time.Hour},
		{"3601", limit},
		{"99999999999999999999999", limit}, // beyond int64
		{"-99999999999999999999999", 0},
		{"1.5", 0}, // not delay-seconds
		{"soon", 0},
		{"Tue, 24 Nov 2026 12:00:30 GMT", 30 * time.Second}, // IMF-fixdate
		{"Tuesday, 24-Nov-26 12:01:00 GMT", time.Minute},    // RFC 850
		{"Tue Nov 24 12:00:05 2026", 5 * time.Second},       // asctime
		{"Tue, 24 Nov 2026 11:59:00 GMT", 0},                // in the past
		{"Tue, 24 Nov 2026 12:00:00 GMT", 0},                // now
		{"Wed, 24 Nov 2027 12:00:00 GMT", limit},            // too far
		{"Fri, 31 Dec 9999 23:59:59 GMT", limit},            // would overflow without the bound
		{"Tue, 24 Nov 2026 12:00:30 +0000", 0},              // not an HTTP-date
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.v, now, limit); got != tt.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
	if got := RetryAfter("10", now, 0); got != 0 {
		t.Errorf("a zero limit allows no wait; got %v", got)
	}
	if got := RetryAfterHeader(http.Header{"Retry-After": {"9"}}, now, limit); got != 9*time.Second {
		t.Errorf("RetryAfterHeader = %v", got)
	}
}

func TestNoRedirects(t *testing.T) {
	final := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the redirect was followed")
	}))
	defer final.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, final.URL, http.StatusFound)
	}))
	defer srv.Close()

	shared := srv.Client()
	hc := NoRedirects(shared)
	if shared.CheckRedirect != nil {
		t.Error("NoRedirects changed the client it was given")
	}
	if hc.Transport != shared.Transport {
		t.Error("NoRedirects dropped the transport")
	}
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status %d, want the 302 itself", resp.StatusCode)
	}
	if NoRedirects(nil).CheckRedirect == nil {
		t.Error("NoRedirects(nil) follows redirects")
	}
}

// TestClipRepairsUTF8 covers what Clip and ClipRunes add to textclip
// (which the cutting itself is tested in): invalid UTF-8 is replaced by
// U+FFFD before the text is measured and cut, so it is never passed on.
func TestClipRepairsUTF8(t *testing.T) {
	tests := []struct {
		clip func(string, int) string
		name string
		s    string
		n    int
		want string
	}{
		{Clip, "Clip", "a\xffb", 10, "a\uFFFDb"},
		{Clip, "Clip", "a\xffbcdef", 4, "a\uFFFD…"}, // U+FFFD is 3 bytes: counted after the repair
		{Clip, "Clip", "\xe2\x82", 10, "\uFFFD"},    // a character cut short upstream
		{Clip, "Clip", "valid", 10, "valid"},
		{ClipRunes, "ClipRunes", "a\xff\xffb", 2, "a\uFFFD…"},
		{ClipRunes, "ClipRunes", "שלום\xff", 5, "שלום\uFFFD"},
	}
	for _, tt := range tests {
		if got := tt.clip(tt.s, tt.n); got != tt.want {
			t.Errorf("%s(%q, %d) = %q, want %q", tt.name, tt.s, tt.n, got, tt.want)
		}
	}
}

// FuzzRetryAfter: never negative, never over the limit, and delay-seconds
// within the limit are taken exactly.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", "-1", "99999999999999999999", "Tue, 24 Nov 2026 12:00:30 GMT",
		"Sun Nov  6 08:49:37 1994", "Sunday, 06-Nov-94 08:49:37 GMT", "+1", " 5 "} {
		f.Add(s, int64(time.Hour))
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string, limit int64) {
		d := RetryAfter(v, now, time.Duration(limit))
		if d < 0 || (limit <= 0 && d != 0) || (limit > 0 && d > time.Duration(limit)) {
			t.Fatalf("RetryAfter(%q, limit %d) = %v", v, limit, d)
		}
	})
}

// FuzzClip: the result is valid UTF-8 and is textclip's cut of the
// repaired input (the cut itself is fuzzed in textclip).
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "abc", "שלום עולם", "🎵🎵", "a\xffb", "\xe2\x82"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 1 << 16
		repaired := strings.ToValidUTF8(s, "\uFFFD")
		for _, tc := range []struct {
			clip, cut func(string, int) string
		}{{Clip, textclip.Bytes}, {ClipRunes, textclip.Runes}} {
			got := tc.clip(s, n)
			if !utf8.ValidString(got) {
				t.Fatalf("clip(%q, %d) = %q is not valid UTF-8", s, n, got)
			}
			if want := tc.cut(repaired, n); got != want {
				t.Fatalf("clip(%q, %d) = %q, want textclip's %q", s, n, got, want)
			}
		}
	})
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"  missing\n\tparameter  track_name ", 100, "missing parameter track_name"},
		{"a  b  c  d", 5, "a b c…"}, // n bytes kept, then the mark
		{"", 10, ""},
	} {
		if got := OneLine(c.in, c.n); got != c.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
