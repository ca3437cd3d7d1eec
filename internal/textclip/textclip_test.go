package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefixCutsOnACharacterBoundary(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short enough", "abc", 3, "abc"},
		{"ascii", "abcdef", 4, "abcd"},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -1, ""},
		{"empty", "", 5, ""},
		{"inside a two-byte letter", "שלום", 3, "ש"},
		{"after a two-byte letter", "שלום", 4, "של"},
		{"inside a four-byte emoji", "a😀b", 4, "a"},
		{"after a four-byte emoji", "a😀b", 5, "a😀"},
		{"inside the first character", "😀", 2, ""},
		// Invalid input: only continuation bytes, no boundary within reach.
		{"continuation bytes only", strings.Repeat("\x80", 10), 6, strings.Repeat("\x80", 6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Prefix(tt.s, tt.n); got != tt.want {
				t.Errorf("Prefix(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
		})
	}
}

func TestBytesMarksOnlyACut(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"שלום", 5, "של…"},
		{"abc", 0, "…"},
		{"…", 0, "…"}, // cut to nothing and marked: the marker spells the input again
	}
	for _, tt := range tests {
		if got := Bytes(tt.s, tt.n); got != tt.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
	if got := Mark("abcdef", 2, "…(truncated)"); got != "ab…(truncated)" {
		t.Errorf("Mark = %q", got)
	}
}

func TestRunesCountsCharacters(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"שלום עולם", 4, "שלום…"},
		{"שלום", 4, "שלום"},
		{"hello", 10, "hello"},
		{"a😀bc", 2, "a😀…"},
		{"abc", 0, "…"},
		{"…", 0, "…"}, // cut to nothing and marked: the marker spells the input again
		{"abc", -3, "…"},
		{"\xff\xfeab", 2, "\xff\xfe…"}, // an invalid byte is one character
	}
	for _, tt := range tests {
		if got := Runes(tt.s, tt.n); got != tt.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// FuzzClip holds the package's promises on any input: valid UTF-8 in, valid
// UTF-8 out; the bounds held; the result a prefix of the input (plus the
// marker only when something was cut).
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "abc", "שלום עולם", "a😀b", "\xff\x80\x80", "e\u0301"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		bound := max(n, 0)
		p := Prefix(s, n)
		if len(p) > bound || !strings.HasPrefix(s, p) {
			t.Fatalf("Prefix(%q, %d) = %q: not a prefix of at most %d bytes", s, n, p, bound)
		}
		if utf8.ValidString(s) && !utf8.ValidString(p) {
			t.Fatalf("Prefix(%q, %d) = %q: invalid UTF-8 from valid", s, n, p)
		}
		if utf8.ValidString(s) && len(s) > bound && bound-len(p) >= utf8.UTFMax {
			t.Fatalf("Prefix(%q, %d) = %q: cut more than a character short", s, n, p)
		}
		// Whole when it fits, else the prefix and the marker (which may
		// spell s again: Bytes("…", 0) is "…", cut to nothing and marked).
		want := s
		if len(s) > bound {
			want = p + Ellipsis
		}
		if b := Bytes(s, n); b != want {
			t.Fatalf("Bytes(%q, %d) = %q, want %q", s, n, b, want)
		}
		r := PrefixRunes(s, n)
		if !strings.HasPrefix(s, r) || utf8.RuneCountInString(r) > bound {
			t.Fatalf("PrefixRunes(%q, %d) = %q", s, n, r)
		}
		if utf8.ValidString(s) && !utf8.ValidString(Runes(s, n)) {
			t.Fatalf("Runes(%q, %d) = %q: invalid UTF-8 from valid", s, n, Runes(s, n))
		}
		if utf8.RuneCountInString(s) > bound && utf8.RuneCountInString(r) != bound {
			t.Fatalf("PrefixRunes(%q, %d) = %q: not %d characters", s, n, r, bound)
		}
	})
}
