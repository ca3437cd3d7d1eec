package webfetch_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/pack/webfetch"
)

// TestUnpagedCallIsBounded: a call with neither line nor character paging
// returns at most DefaultMaxLength characters of a long page, ending at a
// break where the text has one, and following nextStartIndex (start_index
// alone) rebuilds the whole document, nothing lost or repeated.
func TestUnpagedCallIsBounded(t *testing.T) {
	var lines, htmlBody, article strings.Builder
	for i := range 400 {
		fmt.Fprintf(&lines, "Line %d: the quick brown fox jumps over the lazy dog.\n", i)
		fmt.Fprintf(&htmlBody, "<p>Paragraph %d says something about rivers.</p>\n", i)
		fmt.Fprintf(&article, "<p>Paragraph %d: rivers carry water from the hills down to the sea, and with it the soil of the valleys.</p>\n", i)
	}
	endsWith := func(suffix string) func(string) bool {
		return func(s string) bool { return strings.HasSuffix(s, suffix) }
	}
	endsAtSpace := func(s string) bool {
		r, _ := utf8.DecodeLastRuneInString(s)
		return unicode.IsSpace(r)
	}
	// The words repeat at lengths that do not divide DefaultMaxLength, so
	// that a cut at exactly DefaultMaxLength would split one.
	full := func(s string) bool { return utf8.RuneCountInString(s) == webfetch.DefaultMaxLength }
	for _, tc := range []struct {
		name, contentType, body string
		raw                     bool
		partEnds                func(string) bool // holds for every part but the last
	}{
		{name: "lines", contentType: "text/plain; charset=utf-8", body: lines.String(), partEnds: endsWith("\n")},
		{name: "one line of words", contentType: "text/plain; charset=utf-8", body: strings.Repeat("words ", 3000) + "end", partEnds: endsWith(" ")},
		{name: "Hebrew words", contentType: "text/plain; charset=utf-8", body: strings.Repeat("שלום עולם! ", 1500), partEnds: endsWith(" ")},
		{name: "CJK without breaks", contentType: "text/plain; charset=utf-8", body: strings.Repeat("日本語の文章", 2000), partEnds: full},
		{name: "emoji and ideographic spaces", contentType: "text/plain; charset=utf-8", body: strings.Repeat("🙂🙂🙂🙂\u3000🙂🙂", 2000), partEnds: endsAtSpace},
		{name: "raw HTML", contentType: "text/html; charset=utf-8", raw: true,
			body: "<html><head><title>Rivers</title></head><body>\n" + htmlBody.String() + "</body></html>", partEnds: endsWith("\n")},
		{name: "extracted Markdown", contentType: "text/html; charset=utf-8",
			body: "<html><head><title>Rivers</title></head><body><article><h1>Rivers</h1>\n" + article.String() + "</article></body></html>", partEnds: endsWith("\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				fmt.Fprint(w, tc.body)
			}))
			reg := registry(t, webfetch.Config{})
			args := func(kv ...any) map[string]any {
				m := map[string]any{"url": srv.URL, "raw": tc.raw}
				for i := 0; i < len(kv); i += 2 {
					m[kv[i].(string)] = kv[i+1]
				}
				return m
			}
			res, whole := call(t, reg, args("max_length", webfetch.MaxMaxLength))
			if !res.OK() || whole.HasMore {
				t.Fatalf("whole document: %s", res.JSON)
			}
			if (tc.raw || strings.HasPrefix(tc.contentType, "text/plain")) && whole.Content != tc.body {
				t.Fatalf("whole document is not the body")
			}
			if whole.TotalChars <= 2*webfetch.DefaultMaxLength {
				t.Fatalf("the page is too short to test: %d characters", whole.TotalChars)
			}

			var got strings.Builder
			calls := 0
			for start := 0; ; {
				a := args()
				if calls > 0 {
					a = args("start_index", start)
				}
				res, p := call(t, reg, a)
				if !res.OK() {
					t.Fatal(res.JSON)
				}
				n := utf8.RuneCountInString(p.Content)
				if p.StartIndex == nil || *p.StartIndex != start || n == 0 || n > webfetch.DefaultMaxLength || p.TotalChars != whole.TotalChars {
					t.Fatalf("part at %d: startIndex %v, %d characters, totalChars %d", start, p.StartIndex, n, p.TotalChars)
				}
				if want := fmt.Sprintf("characters %d–%d of %d", start, start+n, whole.TotalChars); !strings.Contains(res.Summary, want) {
					t.Errorf("part at %d: summary %q, want it to say %q", start, res.Summary, want)
				}
				got.WriteString(p.Content)
				calls++
				if !p.HasMore {
					if p.NextStartIndex != nil || start+n != whole.TotalChars {
						t.Fatalf("last part at %d: nextStartIndex %v, ends at %d of %d", start, p.NextStartIndex, start+n, whole.TotalChars)
					}
					break
				}
				if p.NextStartIndex == nil || *p.NextStartIndex != start+n {
					t.Fatalf("part at %d of %d characters: nextStartIndex %v", start, n, p.NextStartIndex)
				}
				if !tc.partEnds(p.Content) {
					tail := []rune(p.Content)
					t.Errorf("part at %d does not end where expected: …%q", start, string(tail[max(len(tail)-20, 0):]))
				}
				if calls > whole.TotalChars {
					t.Fatal("no end in sight")
				}
				start = *p.NextStartIndex
			}
			if got.String() != whole.Content {
				t.Error("the parts joined are not the whole document")
			}
			// Each part keeps at least half of the DefaultMaxLength window.
			if most := 2*whole.TotalChars/webfetch.DefaultMaxLength + 1; calls > most {
				t.Errorf("%d calls for %d characters, want at most %d", calls, whole.TotalChars, most)
			}
		})
	}
}

// TestExplicitPagingIsNotBounded: limit and offset keep line paging, and
// max_length its exact character count, whatever the page's length.
func TestExplicitPagingIsNotBounded(t *testing.T) {
	body := strings.Repeat("word ", 3000) + "\n" + strings.Repeat("more words ", 1000)
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	reg := registry(t, webfetch.Config{})
	_, p := call(t, reg, map[string]any{"url": srv.URL, "limit": 1})
	if p.Content != strings.Repeat("word ", 3000) || p.StartIndex != nil || !p.HasMore || p.NextOffset != 2 {
		t.Errorf("limit 1: %d characters, startIndex %v, nextOffset %d", len(p.Content), p.StartIndex, p.NextOffset)
	}
	_, p = call(t, reg, map[string]any{"url": srv.URL, "offset": 1})
	if p.Content != strings.TrimRight(body, "\n") || p.HasMore {
		t.Errorf("offset 1: %d characters of %d, hasMore %v", len(p.Content), len(body), p.HasMore)
	}
	_, p = call(t, reg, map[string]any{"url": srv.URL, "max_length": 7})
	if p.Content != "word wo" || *p.NextStartIndex != 7 {
		t.Errorf("max_length 7 cut elsewhere than at 7 characters: %q", p.Content)
	}
}
