package main

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	in := `goos: linux
variant: before
BenchmarkServeTurns/store=sqlite-2   1   4519209553 ns/op   6.020 ms-cpu/turn   2393 ms-first-p99
PASS
variant: after
BenchmarkServeTurns/store=sqlite-2   1   3000000000 ns/op   3.000 ms-cpu/turn   200 ms-first-p99
variant: before
BenchmarkServeTurns/store=sqlite-2   1   4000000000 ns/op   6.500 ms-cpu/turn   2000 ms-first-p99
BenchmarkServeTurns/store=sqlite-2   1   5000000000 ns/op   5.000 ms-cpu/turn   1384 ms-first-p99
--- BENCH: BenchmarkX-2
BenchmarkNoise-2 not a result
`
	tab := newTable()
	if err := tab.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := tab.write(&out); err != nil {
		t.Fatal(err)
	}
	want := `| benchmark | variant | runs | ns/op | ms-cpu/turn | ms-first-p99 |
|---|---|---|---|---|---|
| ServeTurns/store=sqlite | before | 3 | 4,519,209,553 (4,000,000,000–5,000,000,000) | 6.02 (5.00–6.50) | 2,000 (1,384–2,393) |
| ServeTurns/store=sqlite | after | 1 | 3,000,000,000 | 3.00 | 200 |
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestSummaryAndNumbers(t *testing.T) {
	for _, tc := range []struct {
		vs   []float64
		want string
	}{
		{nil, ""},
		{[]float64{0.000123}, "0.000123"},
		{[]float64{2, 1}, "1.50 (1.00–2.00)"},
		{[]float64{1234.5, 10, 99.95}, "100 (10.0–1,234)"},
		{[]float64{-1500}, "-1,500"},
	} {
		if got := summary(tc.vs); got != tc.want {
			t.Errorf("summary(%v) = %q, want %q", tc.vs, got, tc.want)
		}
	}
}

func TestRatioRows(t *testing.T) {
	// Three interleaved rounds of a baseline and a head, then peers run as
	// sub-benchmarks named for their variant; a fourth head run without its
	// baseline pair makes that benchmark's ratio one of medians.
	in := `variant: baseline
BenchmarkTurns-2   1   100 ns/op   4.0 ms-cpu
variant: head
BenchmarkTurns-2   1   50 ns/op   2.0 ms-cpu
variant: baseline
BenchmarkTurns-2   1   200 ns/op   4.0 ms-cpu
variant: head
BenchmarkTurns-2   1   50 ns/op   1.0 ms-cpu
variant: baseline
BenchmarkTurns-2   1   100 ns/op   4.0 ms-cpu
variant: head
BenchmarkTurns-2   1   100 ns/op   4.0 ms-cpu
variant: own
BenchmarkPages/own   1   10 ns/op
variant: peer
BenchmarkPages/peer   1   40 ns/op
variant: own
BenchmarkPages/own   1   30 ns/op
`
	tab := newTable()
	for _, f := range []string{"head:baseline", "own:*"} {
		if err := (*ratioFlags)(&tab.ratios).Set(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := tab.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := tab.write(&out); err != nil {
		t.Fatal(err)
	}
	want := `| benchmark | variant | runs | ns/op | ms-cpu |
|---|---|---|---|---|
| Turns | baseline | 3 | 100 (100–200) | 4.00 (4.00–4.00) |
| Turns | head | 3 | 50.0 (50.0–100) | 2.00 (1.00–4.00) |
| Turns | head / baseline | 3 | 0.50 (0.25–1.00) | 0.50 (0.25–1.00) |
| Pages | own | 2 | 20.0 (10.0–30.0) |  |
| Pages | peer | 1 | 40.0 |  |
| Pages | own / peer | 1 | 0.50 (of medians) |  |
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestRatioFlagRefusesWhatItCannotPair(t *testing.T) {
	for _, s := range []string{"head", ":baseline", "head:", "*:*"} {
		var r ratioFlags
		if err := r.Set(s); err == nil {
			t.Errorf("Set(%q) accepted", s)
		}
	}
}
