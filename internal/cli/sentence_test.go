package cli

import "testing"

func TestFirstSentence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Searches the web. Returns results.", "Searches the web."},
		{"Finds tracks (e.g. by mood. or genre). Then more.", "Finds tracks (e.g. by mood. or genre)."},
		{"Lists rows, e.g. the first ten. More text.", "Lists rows, e.g. the first ten."},
		{"Spans\n  lines\tand spaces.\nSecond.", "Spans lines and spaces."},
		{"No end", "No end"},
		{"Ends at the end.", "Ends at the end."},
		{"Version 1.2 is out! Yes.", "Version 1.2 is out!"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := firstSentence(tt.in); got != tt.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
