package main

import (
	"strings"
	"testing"
)

func TestReplaceWritesOnlyBetweenTheAreasMarkers(t *testing.T) {
	page := "# B\n\n## Size\n\n<!-- bench:size -->\nold\n<!-- /bench:size -->\n\n## Start\n\n<!-- bench:startup -->\nkept\n<!-- /bench:startup -->\n"
	got, err := replace([]byte(page), "size", []byte("\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# B\n\n## Size\n\n<!-- bench:size -->\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<!-- /bench:size -->\n\n## Start\n\n<!-- bench:startup -->\nkept\n<!-- /bench:startup -->\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Writing the same figures again changes nothing.
	again, err := replace(got, "size", []byte("| a | b |\n|---|---|\n| 1 | 2 |"))
	if err != nil || string(again) != want {
		t.Errorf("second write: %v\n%s", err, again)
	}
}

func TestReplaceRefusesABrokenPage(t *testing.T) {
	tests := []struct {
		name, page, area, err string
	}{
		{"no markers", "# B\n", "size", "want one"},
		{"opening twice", "<!-- bench:size -->\n<!-- bench:size -->\n<!-- /bench:size -->", "size", "want one"},
		{"closing first", "<!-- /bench:size -->\n<!-- bench:size -->\n", "size", "closing marker comes first"},
		{"area with markup", "x", "size -->", "want lower-case"},
		{"a prefix of another area", "<!-- bench:size-stripped -->\n<!-- /bench:size-stripped -->", "size", "want one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := replace([]byte(tt.page), tt.area, []byte("x"))
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want one containing %q", err, tt.err)
			}
		})
	}
}
