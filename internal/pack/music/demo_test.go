package music

import (
	"io"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/musiccaps"
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
	all := musiccaps.Tracks
	if demoCount(0) != all || demoCount(all+1) != all || demoCount(300) != 300 {
		t.Errorf("demoCount: %d %d %d", demoCount(0), demoCount(all+1), demoCount(300))
	}
}
