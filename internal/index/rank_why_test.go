package index

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/embedding"
)

func TestExplain(t *testing.T) {
	caption := "The low quality recording features a ballad. It sounds sad and soulful!\nA piano plays softly? Yes."
	tests := []struct {
		name  string
		query string
		max   int
		want  string
	}{
		{"the sentence with the query's words", "sad songs", 0, "It sounds sad and soulful!"},
		{"a line", "piano", 0, "A piano plays softly?"},
		{"most weight wins", "soulful piano playing softly", 0, "A piano plays softly?"},
		{"nothing matches", "banjo", 0, ""},
		{"clipped", "ballad", 12, "The low qua…"},
	}
	for _, tt := range tests {
		if got := Explain(queryTerms(tt.query), caption, tt.max); got != tt.want {
			t.Errorf("%s: Explain(%q) = %q, want %q", tt.name, tt.query, got, tt.want)
		}
	}
	if got := FirstSentence(caption, 0); got != "The low quality recording features a ballad." {
		t.Errorf("FirstSentence = %q", got)
	}
	if got := Explain(map[string]float64{"x": 1}, strings.Repeat("x ", 1<<20), 5); got != "x x…" {
		t.Errorf("a huge text: %q", got)
	}
}

// The engine's query terms include expansion terms, so a caption that says
// "creepy" explains a match for "scary", which only expansion links to it;
// "funny", as near to "scary" in the word vectors, is its opposite and is
// not added.
func TestQueryTermsIncludeExpansion(t *testing.T) {
	wv, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(wv)
	var docs []Document
	for i, c := range []string{"a creepy tune", "a creepy song", "a creepy drone", "a funny song", "a funny tune", "a funny jingle"} {
		docs = append(docs, Document{ID: string(rune('a' + i)), Fields: Fields{Interpretation: c}})
	}
	if err := e.Add(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	terms := e.QueryTerms("scary")
	if terms["creepy"] == 0 || terms["funny"] != 0 {
		t.Errorf("QueryTerms(scary) = %v, want creepy and not funny", terms)
	}
	if got := Explain(terms, "It is funny. It is creepy.", 0); got != "It is creepy." {
		t.Errorf("Explain = %q", got)
	}
	if PlainQueryTerms("scary")["creepy"] != 0 {
		t.Error("PlainQueryTerms expands")
	}
}

// Text past the byte bound is cut on a character boundary: a letter cut in
// two would reach the page as U+FFFD.
func TestFirstSentenceCutsLongTextOnACharacter(t *testing.T) {
	text := "x" + strings.Repeat("é", maxExplainBytes) // byte maxExplainBytes falls inside a letter
	got := FirstSentence(text, maxExplainBytes)
	if !utf8.ValidString(got) || len(got) > maxExplainBytes || len(got) < maxExplainBytes-4 {
		t.Errorf("FirstSentence: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
