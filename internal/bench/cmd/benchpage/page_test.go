package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Every area of BENCHMARKS.md is one scripts/bench can write, and its
// markers are whole: otherwise `scripts/bench --write` fails on it, or its
// figures can never be regenerated.
func TestPageAreasAreScriptAreas(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	script, err := os.ReadFile(filepath.Join(root, "scripts", "bench"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	areas := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\t"([a-z0-9-]+)\|`).FindAllSubmatch(script, -1) {
		areas[string(m[1])] = true
	}
	if len(areas) < 10 {
		t.Fatalf("found %d areas in scripts/bench: its all_sections list changed shape", len(areas))
	}
	opened := regexp.MustCompile(`(?m)^<!-- bench:([^ ]+) -->$`).FindAllSubmatch(page, -1)
	if len(opened) == 0 {
		t.Fatal("BENCHMARKS.md has no <!-- bench:AREA --> markers")
	}
	for _, m := range opened {
		area := string(m[1])
		if !areas[area] {
			t.Errorf("BENCHMARKS.md area %q is not an area of scripts/bench", area)
		}
		if _, err := replace(page, area, []byte("x")); err != nil {
			t.Errorf("BENCHMARKS.md: %v", err)
		}
	}
}
