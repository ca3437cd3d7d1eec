package weaviate

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzAnalysed: a user's query reaches Weaviate only as its analysed terms,
// which must never carry a character a GraphQL string or Weaviate's
// whitespace tokenizer would read specially (quotes, backslashes, control
// characters, operators), whatever the query.
func FuzzAnalysed(f *testing.F) {
	for _, s := range []string{"melancholic piano", `"} } mutation { x`, "lo-fi hip-hop beats", "שיר עצוב", "a\x00b\\c\"d\ne", "\xff\xfe", "---", "ÀÉÎ õü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := analysed(s)
		if !utf8.ValidString(got) {
			t.Fatalf("analysed(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '-' || r == ' ') {
				t.Fatalf("analysed(%q) = %q: contains %q", s, got, r)
			}
		}
		if strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") {
			t.Fatalf("analysed(%q) = %q: empty terms", s, got)
		}
	})
}
