package musiccaps

import (
	"io"
	"strings"
	"testing"
)

func TestFirstLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "a\nb\n"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"a\nb\nc", 3, "a\nb\nc"},
		{"", 3, ""},
		{"a\n", 0, ""},
	} {
		got, err := io.ReadAll(firstLines(strings.NewReader(tt.in), tt.n))
		if err != nil || string(got) != tt.want {
			t.Errorf("firstLines(%q, %d) = %q, %v; want %q", tt.in, tt.n, got, err, tt.want)
		}
	}
	if Count(0) != Tracks || Count(Tracks+1) != Tracks || Count(300) != 300 {
		t.Errorf("Count: %d %d %d", Count(0), Count(Tracks+1), Count(300))
	}
}
