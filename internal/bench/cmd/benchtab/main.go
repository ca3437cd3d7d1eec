// Command benchtab reads `go test -bench` output and prints a Markdown table
// of each benchmark's metrics as median (min–max) over the runs it saw, one
// row per benchmark and variant: the figures scripts/bench puts in
// BENCHMARKS.md.
//
// The variant is the value of the last "variant: NAME" configuration line
// before a result (the Go benchmark format's key: value lines), so that runs
// of two builds, interleaved by the caller, land in rows side by side. Lines
// that are neither results nor configuration are ignored. A benchmark whose
// name ends in /VARIANT (peers run as sub-benchmarks, one per variant) is
// shown without that suffix, so that the peers' rows line up.
//
// -ratio NUM:DEN (repeatable; either side may be *, every other variant)
// adds, below a benchmark's rows, a row "NUM / DEN" of each metric's ratio:
// paired round by round when both have as many runs (the caller interleaved
// them, so run i of each comes from round i), median (min–max) of those
// ratios; otherwise the ratio of the medians alone.
//
//	go test -bench . -count 5 ./pkg | go run ./internal/bench/cmd/benchtab
//	go run ./internal/bench/cmd/benchtab -title "Chat turns" -ratio head:baseline run1.txt run2.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	title := flag.String("title", "", "a heading printed above the table")
	var ratios ratioFlags
	flag.Var(&ratios, "ratio", "NUM:DEN, variants (or *): add a row of their ratio under each benchmark (repeatable)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: benchtab [-title T] [-ratio NUM:DEN]... [FILE...]   (stdin when no file)")
		flag.PrintDefaults()
	}
	flag.Parse()
	t := newTable()
	t.ratios = ratios
	if flag.NArg() == 0 {
		if err := t.read(os.Stdin); err != nil {
			fail(err)
		}
	}
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			fail(err)
		}
		err = t.read(f)
		f.Close()
		if err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
	}
	if *title != "" {
		fmt.Printf("%s\n\n", *title)
	}
	if err := t.write(os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchtab:", err)
	os.Exit(1)
}

// maxLine bounds a line of input (benchmark output lines are short).
const maxLine = 1 << 20

// result is "BenchmarkName-N  iterations  value unit  value unit ...".
var resultRE = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// configRE is a configuration line, "key: value".
var configRE = regexp.MustCompile(`^([a-z][^\s:]*):\s*(.*)$`)

type key struct{ bench, variant string }

type table struct {
	rows  []key                        // in first-seen order
	units []string                     // in first-seen order
	vals  map[key]map[string][]float64 // row → unit → values
	seen  map[string]bool              // units seen
	has   map[key]bool                 // rows seen

	ratios []ratio // rows of ratios to add under each benchmark
}

// ratio is a -ratio flag: variant names, or "*" for every other variant.
type ratio struct{ num, den string }

type ratioFlags []ratio

func (r *ratioFlags) String() string { return fmt.Sprint(*r) }

func (r *ratioFlags) Set(s string) error {
	num, den, ok := strings.Cut(s, ":")
	if !ok || num == "" || den == "" || (num == "*" && den == "*") {
		return fmt.Errorf("%q: want NUM:DEN, variant names, one of them may be *", s)
	}
	*r = append(*r, ratio{num, den})
	return nil
}

func newTable() *table {
	return &table{vals: map[key]map[string][]float64{}, seen: map[string]bool{}, has: map[key]bool{}}
}

// read adds the results in r.
func (t *table) read(r io.Reader) error {
	variant := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := configRE.FindStringSubmatch(line); m != nil {
			if m[1] == "variant" {
				variant = m[2]
			}
			continue
		}
		m := resultRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		fields := strings.Fields(m[3])
		if len(fields)%2 != 0 {
			continue // not a result line after all
		}
		k := key{m[1], variant}
		if variant != "" {
			k.bench = strings.TrimSuffix(k.bench, "/"+variant)
		}
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			unit := fields[i+1]
			if !t.has[k] {
				t.has[k] = true
				t.rows = append(t.rows, k)
				t.vals[k] = map[string][]float64{}
			}
			if !t.seen[unit] {
				t.seen[unit] = true
				t.units = append(t.units, unit)
			}
			t.vals[k][unit] = append(t.vals[k][unit], v)
		}
	}
	return sc.Err()
}

// write prints the table: a column per unit, median (min–max) and the count
// of runs.
func (t *table) write(w io.Writer) error {
	if len(t.rows) == 0 {
		_, err := fmt.Fprintln(w, "(no benchmark results)")
		return err
	}
	var b strings.Builder
	b.WriteString("| benchmark | variant | runs |")
	for _, u := range t.units {
		fmt.Fprintf(&b, " %s |", u)
	}
	b.WriteString("\n|---|---|---|")
	for range t.units {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	last := map[string]int{} // benchmark → index of its last row
	for i, k := range t.rows {
		last[k.bench] = i
	}
	for i, k := range t.rows {
		runs := 0
		for _, vs := range t.vals[k] {
			runs = max(runs, len(vs))
		}
		v := k.variant
		if v == "" {
			v = "—"
		}
		cells := make([]string, len(t.units))
		for i, u := range t.units {
			cells[i] = summary(t.vals[k][u])
		}
		t.writeRow(&b, k.bench, v, runs, cells)
		if last[k.bench] == i {
			t.writeRatios(&b, k.bench)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *table) writeRow(b *strings.Builder, bench, variant string, runs int, cells []string) {
	fmt.Fprintf(b, "| %s | %s | %d |", strings.TrimPrefix(bench, "Benchmark"), variant, runs)
	for _, c := range cells {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n")
}

// writeRatios adds bench's ratio rows, one per pair of its variants that a
// -ratio flag names.
func (t *table) writeRatios(b *strings.Builder, bench string) {
	var variants []string
	for _, k := range t.rows {
		if k.bench == bench {
			variants = append(variants, k.variant)
		}
	}
	for _, r := range t.ratios {
		for _, num := range variants {
			for _, den := range variants {
				if num == den || (r.num != "*" && r.num != num) || (r.den != "*" && r.den != den) {
					continue
				}
				nv, dv := t.vals[key{bench, num}], t.vals[key{bench, den}]
				runs, cells := 0, make([]string, len(t.units))
				for i, u := range t.units {
					var n int
					cells[i], n = ratioSummary(nv[u], dv[u])
					runs = max(runs, n)
				}
				t.writeRow(b, bench, num+" / "+den, runs, cells)
			}
		}
	}
}

// ratioSummary is num/den: "median (min–max)" of the ratios of paired runs
// when both have as many runs, else the ratio of the medians; and the
// number of ratios it summarises. Empty when either side has no run or a
// denominator is zero.
func ratioSummary(nums, dens []float64) (string, int) {
	if len(nums) == 0 || len(dens) == 0 {
		return "", 0
	}
	if len(nums) != len(dens) {
		d := median(dens)
		if d == 0 {
			return "", 0
		}
		return ratioNum(median(nums)/d) + " (of medians)", 1
	}
	rs := make([]float64, len(nums))
	for i := range nums {
		if dens[i] == 0 {
			return "", 0
		}
		rs[i] = nums[i] / dens[i]
	}
	return summarise(rs, ratioNum), len(rs)
}

// ratioNum prints a ratio with two decimals (0.42, 1.05), small ones with
// two significant digits.
func ratioNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 10:
		return num(v)
	case a >= 0.1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// summary is "median (min–max)", or the value alone for one run.
func summary(vs []float64) string { return summarise(vs, num) }

// summarise is summary with the numbers printed by f.
func summarise(vs []float64, f func(float64) string) string {
	if len(vs) == 0 {
		return ""
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) == 1 {
		return f(med)
	}
	return fmt.Sprintf("%s (%s–%s)", f(med), f(s[0]), f(s[len(s)-1]))
}

// num prints v with three significant digits, thousands separated.
func num(v float64) string {
	if v != 0 && math.Abs(v) < 1000 {
		// Round to three significant digits first, so that 99.95 is 100
		// (printed as such), not 100.0.
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	}
	a := math.Abs(v)
	var s string
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	default:
		s = strconv.FormatFloat(v, 'g', 3, 64)
	}
	return group(s)
}

// group puts thousands separators into the integer part of s.
func group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if len(intPart) <= 3 || strings.ContainsAny(intPart, "e") {
		return sign + s
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}
