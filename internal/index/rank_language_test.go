package index

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

// openAIShaped is an embedder without a vocabulary, as a model server is.
type openAIShaped struct{ embedding.Embedder }

func TestReadQuery(t *testing.T) {
	wv, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(wv)
	// Hebrew lyrics make their words the index's own.
	if err := e.Add(context.Background(), []Document{{ID: "he", Fields: Fields{Title: "שיר", Lyrics: "לילה טוב ירושלים"}}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, query string
		emb         embedding.Embedder
		unread      []string
		script      string
		nothing     bool
	}{
		{"English", "slow sad piano", wv, nil, "", false},
		{"Hebrew", "מוזיקה עצובה, מוזיקה", wv, []string{"מוזיקה", "עצובה"}, "Hebrew", true},
		{"Hebrew with English", "sad עצובה piano", wv, []string{"עצובה"}, "Hebrew", false},
		{"Hebrew the index holds", "ירושלים", wv, nil, "", false},
		{"Greek", "λυπημένο πιάνο", wv, []string{"λυπημένο", "πιάνο"}, "Greek", true},
		{"Japanese", "悲しいピアノ", wv, []string{"悲しいピアノ"}, "Han", true},
		{"stopwords do not count as read", "the עצובה", wv, []string{"עצובה"}, "Hebrew", true},
		{"unknown Latin words are not another language", "zzqx piaano", wv, nil, "", false},
		{"digits", "80s 90s", wv, nil, "", false},
		{"a model server reads what it reads", "מוזיקה עצובה", openAIShaped{wv}, nil, "", false},
		{"empty", "", wv, nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ReadQuery(tt.emb, e.lex.has, tt.query)
			if !slices.Equal(r.Unread, tt.unread) || r.Script != tt.script || r.Nothing != tt.nothing {
				t.Errorf("ReadQuery(%q) = %+v, want unread %q script %q nothing %v", tt.query, r, tt.unread, tt.script, tt.nothing)
			}
			if note := r.Note(); (note == "") != (len(tt.unread) == 0) {
				t.Errorf("note %q for %d unread words", note, len(tt.unread))
			}
		})
	}
	// A long list is cut.
	long := ReadQuery(wv, nil, "א ב ג ד ה ו ז ח").Note()
	if !strings.Contains(long, "א, ב, ג, ד, ה, …") {
		t.Errorf("note %q, want five words and an ellipsis", long)
	}
}

// FuzzSplitNegation: whatever the query, the split neither panics nor
// invents words, and a query without a negated word is kept whole.
func FuzzSplitNegation(f *testing.F) {
	for _, s := range []string{"piano without vocals", "no, not, never", "a happy song, not sad", "no drums but bass", "", "לא שירה"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kept, negated := SplitNegation(s)
		if negated == "" {
			if kept != s {
				t.Fatalf("SplitNegation(%q) = %q, %q: no negation but the query changed", s, kept, negated)
			}
			return
		}
		words := embedding.Words(s)
		for _, w := range append(embedding.Words(kept), embedding.Words(negated)...) {
			if !slices.Contains(words, w) {
				t.Fatalf("SplitNegation(%q) = %q, %q: %q is not a word of the query", s, kept, negated, w)
			}
		}
	})
}
