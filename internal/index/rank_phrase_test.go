package index

import (
	"context"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

// The index holds each two consecutive terms of a field as a phrase term;
// stopwords between them do not part them, and phrases add nothing to a
// document's length.
func TestWeightedTermsPhrases(t *testing.T) {
	tf, length := Fields{Title: "Blue", Interpretation: "Jazz with saxophone"}.weightedTerms(Terms)
	want := map[string]float32{"blue": weightTitle, "jazz": 1, "saxophone": 1, "jazz saxophone": 1}
	if len(tf) != len(want) {
		t.Errorf("terms %v, want %v", tf, want)
	}
	for term, n := range want {
		if tf[term] != n {
			t.Errorf("tf[%q] = %v, want %v (all: %v)", term, tf[term], n, tf)
		}
	}
	if length != weightTitle+2 {
		t.Errorf("length %v, want %v: phrases must not count", length, weightTitle+2)
	}
	// A phrase never spans two fields.
	if _, ok := tf["blue jazz"]; ok {
		t.Error("a phrase across the title and the interpretation")
	}
}

func TestWithPhrases(t *testing.T) {
	tests := []struct {
		query string
		w     float64
		want  []string // the phrase terms added
	}{
		{"acoustic guitar songs", 0.1, []string{"acoustic guitar", "guitar song"}},
		{"jazz with saxophone", 0.1, []string{"jazz saxophone"}},
		{"piano", 0.1, nil},
		{"acoustic guitar", 0, nil},
	}
	for _, tt := range tests {
		got := withPhrases(queryTerms(tt.query), tt.query, tt.w)
		if n := len(got) - len(queryTerms(tt.query)); n != len(tt.want) {
			t.Errorf("%q: %v, want the query's terms and %v", tt.query, got, tt.want)
		}
		for _, p := range tt.want {
			if got[p] != tt.w {
				t.Errorf("%q: weight of %q = %v, want %v", tt.query, p, got[p], tt.w)
			}
		}
	}
}

// Two captions with the same words in another order tie on the words; the
// query's phrase puts the one that says it first, on both the lexical side
// and the hybrid.
func TestPhraseOrdersSameWords(t *testing.T) {
	wv, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(wv)
	docs := []Document{
		{ID: "a", Fields: Fields{Interpretation: "acoustic drums and an electric guitar"}},
		{ID: "b", Fields: Fields{Interpretation: "electric drums and an acoustic guitar"}},
		{ID: "c", Fields: Fields{Interpretation: "a violin solo"}},
		{ID: "d", Fields: Fields{Interpretation: "a choir sings"}},
	}
	if err := e.Add(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		phrase float64
		mode   Mode
		first  string
	}{
		{0, Lexical, "a"}, // a tie, broken by id
		{PhraseWeight, Lexical, "b"},
		{PhraseWeight, Hybrid, "b"},
	} {
		e.SetRankParams(RankParams{LexWeight: 0.9, Phrase: tt.phrase})
		hits, err := e.SearchMode(context.Background(), tt.mode, "acoustic guitar", 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 || hits[0].ID != tt.first {
			t.Errorf("phrase %v, %v: %v, want %s first", tt.phrase, tt.mode, hits, tt.first)
		}
		if tt.phrase == 0 && tt.mode == Lexical && hits[0].Score != hits[1].Score {
			t.Errorf("without phrases the same words score %v and %v, want a tie", hits[0].Score, hits[1].Score)
		}
	}
}

// The matched line prefers the sentence that has the query's phrase over
// one that has its words apart.
func TestExplainPrefersPhrase(t *testing.T) {
	caption := "An acoustic piano and a guitar play. An acoustic guitar strums."
	terms := withPhrases(queryTerms("acoustic guitar"), "acoustic guitar", PhraseWeight)
	if got := Explain(terms, caption, 0); got != "An acoustic guitar strums." {
		t.Errorf("Explain = %q, want the sentence with the phrase", got)
	}
	if got := Explain(queryTerms("acoustic guitar"), caption, 0); got != "An acoustic piano and a guitar play." {
		t.Errorf("without phrases Explain = %q, want the first of two equal sentences", got)
	}
}

// Feedback adds the terms the first pass's documents share, the best at
// the given weight, and leaves out the query's own terms and terms too
// rare to trust.
func TestFeedbackTerms(t *testing.T) {
	x := NewBM25()
	docs := map[string]string{
		"a": "mournful cello and strings", "b": "sorrowful cello with strings", "c": "a cello lament zyx",
		"d": "upbeat pop", "e": "cello and piano", "f": "happy pop", "g": "pop song", "h": "strings",
	}
	for id, text := range docs {
		x.Add(id, Fields{Interpretation: text})
	}
	query := queryTerms("mournful strings")
	first := []Hit{{"a", 1}, {"b", 0.9}, {"c", 0.8}, {"d", 0.1}}
	got := x.feedbackTerms(query, first, FeedbackParams{Docs: 3, Terms: 2, Weight: 0.3})
	if got["mournful"] != 1 || got["string"] != 1 {
		t.Errorf("the query's own terms changed: %v", got)
	}
	if got["cello"] != 0.3 {
		t.Errorf("cello, in all three feedback documents and 4 of 8, weighs %v, want 0.3 (all: %v)", got["cello"], got)
	}
	for _, rare := range []string{"zyx", "sorrowful", "lament"} {
		if _, ok := got[rare]; ok {
			t.Errorf("%q is in fewer than %d documents but was added: %v", rare, feedbackMinDocs, got)
		}
	}
	if _, ok := got["pop"]; ok {
		t.Errorf("pop is only in the 4th document, beyond Docs: %v", got)
	}
	if len(query) != 2 {
		t.Errorf("the query map was modified: %v", query)
	}
	if off := x.feedbackTerms(query, first, FeedbackParams{}); len(off) != 2 {
		t.Errorf("feedback off added terms: %v", off)
	}
}
