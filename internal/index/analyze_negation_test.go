package index

import (
	"context"
	"iter"
	"math"
	"slices"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

func TestNegationTerms(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"There are no voices in this song.", []string{"not:voice", "song"}},
		{"No other instruments, a piano plays.", []string{"not:instrument", "piano", "play"}},
		{"not very clear", []string{"not:clear"}},
		{"Without drums or bass guitar", []string{"not:drum", "not:bass", "guitar"}},
		{"no lo-fi here", []string{"not:lo", "not:fi", "not:lo-fi"}},
		{"A female singer, no percussion. Drums later", []string{"female", "singer", "not:percussion", "drum", "later"}},
	}
	for _, tt := range tests {
		if got := negationTerms(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("negationTerms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	// Without a negator it is Terms.
	for _, s := range []string{"A restless late-night club track, dark and driving!", "hip-hop (lo-fi): 90 bpm", ""} {
		if got, want := negationTerms(s), Terms(s); !slices.Equal(got, want) {
			t.Errorf("negationTerms(%q) = %q, Terms %q", s, got, want)
		}
	}
}

func TestSplitNegation(t *testing.T) {
	tests := []struct {
		text, kept, negated string
	}{
		{"piano without vocals", "piano", "vocals"},
		{"instrumental music with no vocals", "instrumental music with", "vocals"},
		{"a happy song, not sad", "a happy song", "sad"},
		{"jazz, no saxophone", "jazz", "saxophone"},
		{"no drums but a bass guitar", "a bass guitar", "drums"},
		{"without drums or bass guitar, slow", "guitar, slow", "drums or bass"},
		{"Slow sad piano", "Slow sad piano", ""},
		{"", "", ""},
		{"no", "no", ""},
	}
	for _, tt := range tests {
		kept, negated := SplitNegation(tt.text)
		if kept != tt.kept || negated != tt.negated {
			t.Errorf("SplitNegation(%q) = %q, %q; want %q, %q", tt.text, kept, negated, tt.kept, tt.negated)
		}
	}
}

func TestDropNegation(t *testing.T) {
	tests := []struct {
		query, search, negated string
	}{
		{"piano without vocals", "piano", "vocals"},
		{"a happy song, not sad", "a happy song", "sad"},
		{"Slow sad piano", "Slow sad piano", ""},
		// Only negation: nothing else to search for, so nothing is dropped.
		{"no vocals", "no vocals", ""},
		{"the, without drums", "the, without drums", ""},
	}
	for _, tt := range tests {
		search, negated := DropNegation(tt.query)
		if search != tt.search || negated != tt.negated {
			t.Errorf("DropNegation(%q) = %q, %q; want %q, %q", tt.query, search, negated, tt.search, tt.negated)
		}
	}
}

func TestDemote(t *testing.T) {
	hits := []Hit{{"vocal", 0.9}, {"singer", 0.8}, {"plain", 0.7}, {"both", 0.6}}
	holding := map[string][]string{
		"vocal":  {"vocal", "both", "not-in-pool"},
		"singer": {"singer", "both"},
		"piano":  {"vocal", "singer", "plain", "both"},
	}
	holders := func(t string) iter.Seq[string] { return slices.Values(holding[t]) }
	tests := []struct {
		name          string
		negated, kept map[string]float64
		by            float64
		k             int
		want          []Hit
	}{
		{"a negated word sinks its holders", map[string]float64{"vocal": 1}, nil, 1, 4,
			[]Hit{{"singer", 0.8}, {"plain", 0.7}, {"vocal", 0.9 - 1}, {"both", 0.6 - 1}}},
		{"an expansion by its weight, the heaviest held counts once", map[string]float64{"vocal": 2, "singer": 0.5}, nil, 0.5, 4,
			[]Hit{{"plain", 0.7}, {"singer", 0.8 - 0.25}, {"vocal", 0.9 - 0.5}, {"both", 0.6 - 0.5}}},
		{"a kept term is never demoted", map[string]float64{"vocal": 1, "piano": 1}, map[string]float64{"piano": 1}, 1, 2,
			[]Hit{{"singer", 0.8}, {"plain", 0.7}}},
		{"no holders, no change", map[string]float64{"drum": 1}, nil, 1, 3,
			[]Hit{{"vocal", 0.9}, {"singer", 0.8}, {"plain", 0.7}}},
	}
	for _, tt := range tests {
		got := Demote(hits, tt.negated, tt.kept, holders, tt.by, tt.k)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %v, want %v", tt.name, got, tt.want)
		}
		for i := range got {
			if got[i].ID != tt.want[i].ID || math.Abs(got[i].Score-tt.want[i].Score) > 1e-9 {
				t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

// TestSearchNegation: a negated word is not searched for, and a track that
// has it falls below one that does not.
func TestSearchNegation(t *testing.T) {
	wv, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(wv)
	docs := []Document{
		{ID: "vocal-1", Fields: Fields{Interpretation: "A piano ballad with a male singer and vocals."}},
		{ID: "vocal-2", Fields: Fields{Interpretation: "Piano and vocals: a woman sings over the piano."}},
		{ID: "solo", Fields: Fields{Interpretation: "A gentle piano piece: solo piano, slow and quiet."}},
		{ID: "guitar", Fields: Fields{Interpretation: "An acoustic guitar with vocals."}},
	}
	if err := e.Add(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"piano without vocals", "piano, no vocals", "piano but not vocals"} {
		hits, err := e.Search(context.Background(), q, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != "solo" {
			t.Errorf("%q: %v, want the piano track without vocals first", q, hits)
		}
	}
	// Without negation, vocals count for the vocal tracks.
	hits, err := e.Search(context.Background(), "piano with vocals", 1, nil)
	if err != nil || len(hits) == 0 || hits[0].ID == "solo" {
		t.Errorf("piano with vocals: %v, %v; want a vocal track first", hits, err)
	}
	// What explains a match leaves the negated word out.
	if terms := e.QueryTerms("piano without vocals"); terms["vocal"] != 0 || terms["piano"] == 0 {
		t.Errorf("QueryTerms(piano without vocals) = %v, want piano and not vocal", terms)
	}
}

func TestOnlyNegation(t *testing.T) {
	tests := []struct {
		query, negated string
		only           bool
	}{
		{"no vocals", "vocals", true},
		{"not too fast", "too fast", true},
		{"without drums, please", "drums", false},
		{"piano without vocals", "vocals", false},
		{"slow sad piano", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if negated, only := OnlyNegation(tt.query); negated != tt.negated || only != tt.only {
			t.Errorf("OnlyNegation(%q) = %q, %v; want %q, %v", tt.query, negated, only, tt.negated, tt.only)
		}
	}
}
