package index

import (
	"slices"
	"testing"
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
		kept, negated := splitNegation(tt.text)
		if kept != tt.kept || negated != tt.negated {
			t.Errorf("splitNegation(%q) = %q, %q; want %q, %q", tt.text, kept, negated, tt.kept, tt.negated)
		}
	}
}
