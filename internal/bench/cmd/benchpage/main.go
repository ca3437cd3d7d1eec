// Command benchpage writes generated figures into BENCHMARKS.md: it replaces
// what lies between an area's markers,
//
//	<!-- bench:AREA -->
//	…
//	<!-- /bench:AREA -->
//
// with the contents of a file, and leaves the rest of the page as it is.
// scripts/bench --write calls it once per area it ran.
//
//	go run ./internal/bench/cmd/benchpage -page BENCHMARKS.md -area startup startup.md
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
)

func main() {
	page := flag.String("page", "BENCHMARKS.md", "the page to write")
	area := flag.String("area", "", "the area whose markers enclose the figures")
	flag.Parse()
	if *area == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchpage [-page BENCHMARKS.md] -area AREA FILE")
		os.Exit(2)
	}
	if err := run(*page, *area, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "benchpage:", err)
		os.Exit(1)
	}
}

func run(pagePath, area, from string) error {
	page, err := os.ReadFile(pagePath)
	if err != nil {
		return err
	}
	body, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	out, err := replace(page, area, body)
	if err != nil {
		return fmt.Errorf("%s: %w", pagePath, err)
	}
	return os.WriteFile(pagePath, out, 0o644)
}

// areaName keeps an area usable in a marker and a regular expression.
var areaName = regexp.MustCompile(`^[a-z0-9-]+$`)

// replace returns page with the text between area's markers replaced by
// body. Each marker must appear exactly once, the opening one first, so that
// a typo in the page cannot make the figures land elsewhere or vanish.
func replace(page []byte, area string, body []byte) ([]byte, error) {
	if !areaName.MatchString(area) {
		return nil, fmt.Errorf("area %q: want lower-case letters, digits and -", area)
	}
	open, closing := []byte("<!-- bench:"+area+" -->\n"), []byte("<!-- /bench:"+area+" -->")
	if bytes.Count(page, open) != 1 || bytes.Count(page, closing) != 1 {
		return nil, fmt.Errorf("area %q: want one %q line and one %q", area, bytes.TrimSpace(open), closing)
	}
	i := bytes.Index(page, open) + len(open)
	j := bytes.Index(page, closing)
	if j < i {
		return nil, errors.New("area " + area + ": the closing marker comes first")
	}
	body = bytes.TrimSpace(body)
	var b bytes.Buffer
	b.Write(page[:i])
	b.WriteString("\n")
	b.Write(body)
	b.WriteString("\n\n")
	b.Write(page[j:])
	return b.Bytes(), nil
}
