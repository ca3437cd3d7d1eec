package webfetch_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/tool"
)

func articleServer(t *testing.T) string {
	t.Helper()
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, article)
	}))
	return srv.URL
}

func TestCharacterPaging(t *testing.T) {
	u := articleServer(t)
	reg := registry(t, webfetch.Config{})
	res, whole := call(t, reg, map[string]any{"url": u})
	if !res.OK() {
		t.Fatal(res.JSON)
	}
	if whole.TotalChars != utf8.RuneCountInString(whole.Content) || whole.StartIndex != nil {
		t.Fatalf("line mode: totalChars=%d startIndex=%v", whole.TotalChars, whole.StartIndex)
	}

	// Following nextStartIndex from 0 rebuilds the whole Markdown.
	var got strings.Builder
	start, calls := 0, 0
	for {
		res, p := call(t, reg, map[string]any{"url": u, "start_index": start, "max_length": 100})
		if !res.OK() {
			t.Fatal(res.JSON)
		}
		if p.StartIndex == nil || *p.StartIndex != start || utf8.RuneCountInString(p.Content) > 100 || p.TotalChars != whole.TotalChars {
			t.Fatalf("page at %d: %+v", start, p)
		}
		got.WriteString(p.Content)
		if calls++; !p.HasMore {
			if p.NextStartIndex != nil {
				t.Fatalf("last page has nextStartIndex %d", *p.NextStartIndex)
			}
			break
		}
		if p.NextStartIndex == nil || *p.NextStartIndex != start+100 {
			t.Fatalf("page at %d: nextStartIndex %v, want %d", start, p.NextStartIndex, start+100)
		}
		start = *p.NextStartIndex
	}
	if got.String() != whole.Content {
		t.Errorf("pages joined differ from the whole:\n%q\n%q", got.String(), whole.Content)
	}
	if want := (whole.TotalChars + 99) / 100; calls != want {
		t.Errorf("%d pages, want %d", calls, want)
	}

	// max_length alone starts at 0; start_index alone takes 5000 characters.
	_, p := call(t, reg, map[string]any{"url": u, "max_length": 10})
	if *p.StartIndex != 0 || p.Content != string([]rune(whole.Content)[:10]) || p.Offset != 1 || p.Lines != 1 {
		t.Errorf("max_length 10: %+v", p)
	}
	_, p = call(t, reg, map[string]any{"url": u, "start_index": 0})
	if p.Content != whole.Content || p.HasMore {
		t.Errorf("start_index 0 (default max_length %d) did not return the whole short page: %+v", webfetch.DefaultMaxLength, p)
	}
	_, p = call(t, reg, map[string]any{"url": u, "start_index": whole.TotalChars + 10})
	if p.Content != "" || p.HasMore || p.Lines != 0 {
		t.Errorf("start_index past the end: %+v", p)
	}
}

func TestLinePagingSaysWhatComesNext(t *testing.T) {
	reg := registry(t, webfetch.Config{})
	u := articleServer(t)
	_, p := call(t, reg, map[string]any{"url": u, "offset": 2, "limit": 3})
	if !p.HasMore || p.NextOffset != 5 {
		t.Errorf("offset 2 limit 3: nextOffset %d, want 5 (%+v)", p.NextOffset, p)
	}
	_, p = call(t, reg, map[string]any{"url": u})
	if p.HasMore || p.NextOffset != 0 {
		t.Errorf("whole page: %+v", p)
	}
}

func TestPagingStylesDoNotMix(t *testing.T) {
	reg := registry(t, webfetch.Config{})
	u := articleServer(t)
	for _, args := range []map[string]any{
		{"url": u, "offset": 2, "start_index": 0},
		{"url": u, "limit": 2, "max_length": 100},
		{"url": u, "max_length": webfetch.MaxMaxLength + 1},
		{"url": u, "max_length": 0},
		{"url": u, "start_index": -1},
	} {
		res, _ := call(t, reg, args)
		if res.OK() || res.Err.Code != tool.CodeValidation {
			t.Errorf("%v: got %s, want VALIDATION", args, res.JSON)
		}
	}
}

func TestRawMode(t *testing.T) {
	reg := registry(t, webfetch.Config{})
	u := articleServer(t)
	res, out := call(t, reg, map[string]any{"url": u, "raw": true})
	if !res.OK() {
		t.Fatal(res.JSON)
	}
	if out.Content != article || !out.Raw || out.Title != "Asynchronous Programming in Rust" || out.ContentType != "text/html" {
		t.Errorf("raw: title %q raw %v type %q content:\n%s", out.Title, out.Raw, out.ContentType, out.Content)
	}
	// Paging applies to the raw text as well.
	_, p := call(t, reg, map[string]any{"url": u, "raw": true, "offset": 2, "limit": 1})
	if p.Content != strings.Split(article, "\n")[1] || !p.HasMore {
		t.Errorf("raw offset 2 limit 1: %+v", p)
	}
	_, p = call(t, reg, map[string]any{"url": u, "raw": true, "start_index": 2, "max_length": 7})
	if p.Content != article[2:9] {
		t.Errorf("raw start_index 2 max_length 7: %q", p.Content)
	}
}

func TestRawModeDecodesCharset(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<html><head><title>Caf\xe9</title></head><body><p>na\xefve</p></body></html>"))
	}))
	res, out := call(t, registry(t, webfetch.Config{}), map[string]any{"url": srv.URL, "raw": true})
	if !res.OK() {
		t.Fatal(res.JSON)
	}
	if out.Title != "Café" || !strings.Contains(out.Content, "<p>naïve</p>") {
		t.Errorf("raw Latin-1 page: title %q content %q", out.Title, out.Content)
	}
}

func FuzzCharPaging(f *testing.F) {
	f.Add("héllo\nwörld", 0, 3)
	f.Add("", 5, 1)
	f.Add("\xff\xfeab\n", 1, 2)
	f.Add("x", -4, -1)
	f.Fuzz(func(t *testing.T, md string, start, maxLength int) {
		out := webfetch.PageChars(md, start, maxLength)
		n := utf8.RuneCountInString(out.Content)
		if n > max(maxLength, 1) || out.TotalChars != utf8.RuneCountInString(md) {
			t.Fatalf("%d characters for max_length %d: %+v", n, maxLength, out)
		}
		if !strings.Contains(md, out.Content) {
			t.Fatalf("content is not a slice of the document")
		}
		s := max(start, 0)
		if out.HasMore != (s+n < out.TotalChars) {
			t.Fatalf("HasMore wrong: start %d n %d total %d", s, n, out.TotalChars)
		}
		if out.HasMore && *out.NextStartIndex != s+n {
			t.Fatalf("nextStartIndex %d, want %d", *out.NextStartIndex, s+n)
		}
		// Cut at a break: a prefix of the same part, never empty while
		// text remains, and the next part starts where it ends.
		b := webfetch.PageCharsAtBreak(md, start, maxLength)
		bn := utf8.RuneCountInString(b.Content)
		if !strings.HasPrefix(out.Content, b.Content) || (bn == 0) != (n == 0) || b.HasMore != (s+bn < b.TotalChars) {
			t.Fatalf("at a break: %q of %q, hasMore %v", b.Content, out.Content, b.HasMore)
		}
		if b.HasMore && *b.NextStartIndex != s+bn {
			t.Fatalf("at a break: nextStartIndex %d, want %d", *b.NextStartIndex, s+bn)
		}
	})
}

func TestPageCharsAtBreak(t *testing.T) {
	for _, tc := range []struct {
		md       string
		start, n int
		want     string
	}{
		{md: "one two\nthree four", n: 12, want: "one two\n"},
		{md: "one two three four", n: 12, want: "one two "},
		{md: "one two three four", n: 13, want: "one two three"}, // the next character is a space
		{md: "one two three four", start: 4, n: 10, want: "two three "},
		{md: "ab\ncdefghijkl", n: 10, want: "ab\ncdefghi"}, // a break this early would keep less than half
		{md: "שלום עולם שלום", n: 12, want: "שלום עולם "},
		{md: "日本語の文章です", n: 5, want: "日本語の文"}, // no break: cut at the length
		{md: "short", n: 12, want: "short"},
	} {
		out := webfetch.PageCharsAtBreak(tc.md, tc.start, tc.n)
		if out.Content != tc.want {
			t.Errorf("%q from %d, %d characters: %q, want %q", tc.md, tc.start, tc.n, out.Content, tc.want)
		}
	}
}
