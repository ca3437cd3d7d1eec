package isrc_test

import (
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/isrc"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"USRC17607839", "USRC17607839"},
		{"usrc17607839", "USRC17607839"},
		{"US-RC1-76-07839", "USRC17607839"},
		{" gb-aye-97-00123 ", "GBAYE9700123"},
		{"GB AYE 97 00123", "GBAYE9700123"}, // spaces inside, as some catalogues print it
		{"USR-C17607839", "USRC17607839"},
		{"USRC1760783", ""},  // 11 characters
		{"U1RC17607839", ""}, // country must be letters
		{"USRC1760783A", ""}, // designation must be digits
		{"US_RC17607839", ""},
		{"ÜSRC17607839", ""},
		{strings.Repeat("A", 65), ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := isrc.Normalize(tt.in)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzNormalize: whatever comes in, a result is canonical, and normalising
// it again changes nothing.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"US-RC1-76-07839", " gb aye 97 00123", "", "ÜSRC17607839", strings.Repeat("-", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := isrc.Normalize(s)
		if err != nil {
			if n != "" {
				t.Fatalf("Normalize(%q) = %q with error %v", s, n, err)
			}
			return
		}
		if !isrc.Valid(n) {
			t.Fatalf("Normalize(%q) = %q, not canonical", s, n)
		}
		if again, err := isrc.Normalize(n); err != nil || again != n {
			t.Fatalf("Normalize(%q) = %q, %v; want it unchanged", n, again, err)
		}
	})
}
