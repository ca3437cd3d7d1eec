package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
)

// clustered returns n seeded random unit vectors of the given length around
// a few hundred centres, like embeddings of a catalogue with genres and
// moods, plus queries drawn the same way.
func clustered(n, queries, dims int, seed uint64) (vecs, qs [][]float32) {
	r := rand.New(rand.NewPCG(seed, 1))
	const centres = 200
	cs := make([][]float32, centres)
	for i := range cs {
		cs[i] = make([]float32, dims)
		for j := range cs[i] {
			cs[i][j] = float32(r.NormFloat64())
		}
	}
	draw := func() []float32 {
		c := cs[r.IntN(centres)]
		v := make([]float32, dims)
		for j := range v {
			v[j] = c[j] + 2*float32(r.NormFloat64()) // clusters overlap: same-cluster cosine ≈ 0.2
		}
		normalize(v)
		return v
	}
	for range n {
		vecs = append(vecs, draw())
	}
	for range queries {
		qs = append(qs, draw())
	}
	return vecs, qs
}

func recallAt(got, want []Hit) float64 {
	in := map[string]bool{}
	for _, h := range want {
		in[h.ID] = true
	}
	var n int
	for _, h := range got {
		if in[h.ID] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// uniform returns n seeded random unit vectors of the given length, drawn
// uniformly on the sphere, plus queries drawn the same way: data whose
// nearest neighbours barely stand out from the rest, the hardest case for a
// quantized search.
func uniform(n, queries, dims int, seed uint64) (vecs, qs [][]float32) {
	r := rand.New(rand.NewPCG(seed, 2))
	draw := func() []float32 {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		normalize(v)
		return v
	}
	for range n {
		vecs = append(vecs, draw())
	}
	for range queries {
		qs = append(qs, draw())
	}
	return vecs, qs
}

// gaussianClusters returns n seeded random unit vectors of the given
// length in 1,000 Gaussian clusters: a centre drawn uniformly on the unit
// sphere plus noise of the same expected length (each component
// N(0, 1/dims)), normalised, so that a vector's cosine with its centre is
// about 0.71 and with another of its cluster about 0.5, and with the rest
// about 0. The queries are drawn the same way: near the data, each in a
// cluster.
func gaussianClusters(n, queries, dims int, seed uint64) (vecs, qs [][]float32) {
	r := rand.New(rand.NewPCG(seed, 3))
	const centres = 1000
	sigma := 1 / math.Sqrt(float64(dims))
	cs := make([][]float32, centres)
	for i := range cs {
		cs[i] = make([]float32, dims)
		for j := range cs[i] {
			cs[i][j] = float32(r.NormFloat64())
		}
		normalize(cs[i])
	}
	draw := func() []float32 {
		c := cs[r.IntN(centres)]
		v := make([]float32, dims)
		for j := range v {
			v[j] = c[j] + float32(sigma*r.NormFloat64())
		}
		normalize(v)
		return v
	}
	for range n {
		vecs = append(vecs, draw())
	}
	for range queries {
		qs = append(qs, draw())
	}
	return vecs, qs
}

// BenchmarkVectorSearch compares, in one run, this package's index (codes
// scanned 32 at a time with an error bound, candidates estimated from 8-bit
// codes with a strict bound, then exact rescoring) at DefaultErrorBound,
// the same search at main's error bound (mainErrorBound), and the exact
// float32 scan, on 384-d vectors, k = 10, uniform on the sphere and in
// 1,000 Gaussian clusters. Each iteration runs several rounds; in a round
// every method answers its queries, in an order that rotates between rounds
// so that load drifts hit all alike. Times are the benchmark thread's CPU
// time (the goroutine is locked to it; on a shared machine wall time counts
// other processes' turns): each method's median, min and max per query over
// the rounds, and the per-round ratio of the index's time to main's. It
// also reports recall@10 against the exact answer, how many vectors passed
// the one-bit bound and were rescored exactly per query, the index's heap
// bytes per vector (ids and map included), and the build's time (AddBatch:
// normalising, rotating, coding). Main's kernels were also slower: compare
// with main's own binary for the whole difference (BENCHMARKS.md).
//
// The 1M-vector cases take minutes and ~3 GB; they run only with
// TOOLPORT_BENCH_1M=1. Run with -cpu 1 -benchtime 1x:
//
//	go test -run NONE -bench VectorSearch -benchtime 1x -cpu 1 ./internal/index/
//	TOOLPORT_BENCH_1M=1 go test -run NONE -bench 'VectorSearch/.*/1M' -benchtime 1x -cpu 1 -timeout 60m ./internal/index/
func BenchmarkVectorSearch(b *testing.B) {
	gens := []struct {
		name     string
		generate func(n, queries, dims int, seed uint64) (vecs, qs [][]float32)
	}{{"clustered", gaussianClusters}, {"uniform", uniform}}
	sizes := []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}}
	for _, g := range gens {
		for _, size := range sizes {
			b.Run(g.name+"/"+size.name, func(b *testing.B) {
				if size.n > 100_000 && os.Getenv("TOOLPORT_BENCH_1M") != "1" {
					b.Skip("set TOOLPORT_BENCH_1M=1 to run the 1M-vector case")
				}
				benchVectorSearch(b, g.generate, size.n)
			})
		}
	}
}

func benchVectorSearch(b *testing.B, generate func(n, queries, dims int, seed uint64) (vecs, qs [][]float32), n int) {
	const dims, k, rounds = 384, 10, 5
	nq, nSlow := 200, 10 // queries per round: all for the quantized searches, the first nSlow for the exact scan
	if n > 100_000 {
		nq, nSlow = 40, 2
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	vecs, qs := generate(n, nq, dims, 42)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("id%07d", i)
	}
	x := NewVectorIndex(dims)
	buildWall, buildCPU := time.Now(), threadCPU()
	if err := x.AddBatch(ids, vecs); err != nil {
		b.Fatal(err)
	}
	buildCPU, buildSecs := threadCPU()-buildCPU, time.Since(buildWall).Seconds()
	// The build's peak is the caller's vectors plus the index (AddBatch
	// copies no batch); the index is what stays once they are dropped.
	vecs = nil
	runtime.GC()
	runtime.ReadMemStats(&m1)
	perVector := (float64(m1.HeapAlloc) - float64(m0.HeapAlloc)) / float64(n) // ids and queries included

	truth := make([][]Hit, nq)
	for i, q := range qs {
		truth[i] = x.SearchExact(q, k, nil)
	}

	type method struct {
		name      string
		queries   int
		eps       float64 // the error bound it searches with
		search    func(q []float32) []Hit
		perQ      []float64 // CPU ms per query, one per round
		recall    float64
		answers   int
		estimated int
		rescored  int
		scanner   fastScanner // the kernels it searches with, when not the machine's
	}
	var methods []*method
	methods = []*method{
		{name: "head", queries: nq, eps: DefaultErrorBound, search: func(q []float32) []Hit {
			h, c := x.search(q, k, nil)
			methods[0].estimated += c.estimated
			methods[0].rescored += c.exact
			return h
		}},
		{name: "main", queries: nq, eps: mainErrorBound, search: func(q []float32) []Hit {
			h, c := x.search(q, k, nil)
			methods[1].estimated += c.estimated
			methods[1].rescored += c.exact
			return h
		}},
		{name: "exact", queries: nSlow, eps: DefaultErrorBound, search: func(q []float32) []Hit { return x.SearchExact(q, k, nil) }},
	}
	// On a machine with AVX-512, the same search with the AVX2 kernels, so
	// that the kernels are compared in one process (separate processes
	// differ by more than the kernels do: where their arrays landed, load).
	machine := x.scanner
	if machine.avx512 {
		avx2 := &method{name: "avx2", queries: nq, eps: DefaultErrorBound, scanner: fastScanner{avx2: true}}
		avx2.search = func(q []float32) []Hit {
			h, c := x.search(q, k, nil)
			avx2.estimated += c.estimated
			avx2.rescored += c.exact
			return h
		}
		methods = append(methods, avx2)
	}
	for b.Loop() {
		for round := range rounds {
			for i := range methods {
				m := methods[(i+round)%len(methods)]
				x.SetErrorBound(m.eps)
				x.scanner = machine
				if m.scanner != (fastScanner{}) {
					x.scanner = m.scanner
				}
				start := threadCPU()
				for j := range m.queries {
					got := m.search(qs[j])
					m.recall += recallAt(got, truth[j])
					m.answers++
				}
				m.perQ = append(m.perQ, (threadCPU()-start)*1000/float64(m.queries))
			}
		}
	}
	// ratio reports the head's CPU per query over another method's, round
	// by round: median, min and max.
	ratio := func(other int, name string) {
		ratios := make([]float64, len(methods[0].perQ))
		for i := range ratios {
			ratios[i] = methods[0].perQ[i] / methods[other].perQ[i]
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "head/"+name)
		b.ReportMetric(ratios[0], "head/"+name+"-min")
		b.ReportMetric(ratios[len(ratios)-1], "head/"+name+"-max")
	}
	ratio(1, "main")
	if len(methods) > 3 {
		ratio(3, "avx2")
	}
	for _, m := range methods {
		slices.Sort(m.perQ)
		b.ReportMetric(m.perQ[len(m.perQ)/2], m.name+"-cpu-ms/q")
		b.ReportMetric(m.perQ[0], m.name+"-min-cpu-ms/q")
		b.ReportMetric(m.perQ[len(m.perQ)-1], m.name+"-max-cpu-ms/q")
		b.ReportMetric(m.recall/float64(m.answers), m.name+"-recall@10")
		if m.estimated > 0 {
			b.ReportMetric(float64(m.estimated)/float64(m.answers), m.name+"-passed1bit/q")
			b.ReportMetric(float64(m.rescored)/float64(m.answers), m.name+"-rescored/q")
		}
	}
	b.ReportMetric(perVector, "B/vector")
	b.ReportMetric(buildCPU, "build-cpu-s")
	b.ReportMetric(buildSecs, "build-s")
}

// mainErrorBound is DefaultErrorBound as main had it.
const mainErrorBound = 2

// DefaultCandidatesBefore is the fixed candidate count of the search the
// index had before (see hammingBaseline).
const DefaultCandidatesBefore = 8000

// BenchmarkErrorBound is the recall/cost trade-off of the error bound
// multiplier (see VectorIndex.SetErrorBound) that DefaultErrorBound was
// chosen by: 384-d vectors, k = 10, uniform and in Gaussian clusters, at
// 100k with two seeds (42 to choose on, 7 held out) and, with
// TOOLPORT_BENCH_1M=1, at 1M (seed 42, held out too: other vectors, other
// queries). For each multiplier: recall@10 against the exact answer over
// 200 queries, the vectors past the one-bit bound per query, and the
// thread's CPU ms per query.
//
//	go test -run NONE -bench ErrorBound -benchtime 1x -cpu 1 ./internal/index/
func BenchmarkErrorBound(b *testing.B) {
	const nq, dims, k = 200, 384, 10
	epsilons := []float64{1.25, 1.5, 1.6, 1.7, 1.8, 1.9, 2, 2.5}
	gens := []struct {
		name     string
		generate func(n, queries, dims int, seed uint64) (vecs, qs [][]float32)
	}{{"clustered", gaussianClusters}, {"uniform", uniform}}
	sets := []struct {
		name string
		n    int
		seed uint64
	}{{"100k-seed42", 100_000, 42}, {"100k-seed7", 100_000, 7}, {"1M-seed42", 1_000_000, 42}}
	for _, g := range gens {
		for _, set := range sets {
			b.Run(g.name+"/"+set.name, func(b *testing.B) {
				if set.n > 100_000 && os.Getenv("TOOLPORT_BENCH_1M") != "1" {
					b.Skip("set TOOLPORT_BENCH_1M=1 to run the 1M-vector case")
				}
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				vecs, qs := g.generate(set.n, nq, dims, set.seed)
				ids := make([]string, set.n)
				for i := range ids {
					ids[i] = fmt.Sprintf("id%07d", i)
				}
				x := NewVectorIndex(dims)
				if err := x.AddBatch(ids, vecs); err != nil {
					b.Fatal(err)
				}
				vecs = nil
				truth := make([][]Hit, nq)
				for i, q := range qs {
					truth[i] = x.SearchExact(q, k, nil)
				}
				for b.Loop() {
					for _, eps := range epsilons {
						x.SetErrorBound(eps)
						var recall float64
						var passed int
						start := threadCPU()
						for i, q := range qs {
							got, c := x.search(q, k, nil)
							recall += recallAt(got, truth[i])
							passed += c.estimated
						}
						ms := (threadCPU() - start) * 1000 / nq
						name := fmt.Sprintf("eps%g-", eps)
						b.ReportMetric(recall/nq, name+"recall@10")
						b.ReportMetric(float64(passed)/nq, name+"passed1bit/q")
						b.ReportMetric(ms, name+"cpu-ms/q")
					}
				}
			})
		}
	}
}

// BenchmarkPoolSelection: the hybrid's vector pool, the 1,000 best of 5,521
// cosines, by selectSet over (slot, score) structs and by largestSlots.
func BenchmarkPoolSelection(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	scores := make([]float32, 5521)
	for i := range scores {
		scores[i] = rng.Float32()
	}
	all := make([]slotScore, len(scores))
	b.Run("selectSet", func(b *testing.B) {
		for b.Loop() {
			for i, s := range scores {
				all[i] = slotScore{int32(i), s}
			}
			selectSet(all, hybridVecPool, bySlotScore)
		}
	})
	tmp := make([]float32, len(scores))
	b.Run("largestSlots", func(b *testing.B) {
		for b.Loop() {
			largestSlots(all[:0], scores, tmp, hybridVecPool)
		}
	})
}

// interleavedCPU times variants of one benchmark in one process: each
// b.Loop iteration runs every variant rounds times, the order rotated
// every round so that none always follows the same one, on a locked OS
// thread. run(i) runs variant i once and returns the units it did; each
// variant's thread CPU per unit, in nanoseconds, is reported as median
// (names[i]+unit), min and max (names[i]+"min", names[i]+"max").
func interleavedCPU(b *testing.B, rounds int, names []string, unit string, run func(i int) float64) {
	per := make([][]float64, len(names))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b.Loop() {
		for round := range rounds {
			for i := range names {
				i = (i + round) % len(names)
				start := threadCPU()
				units := run(i)
				per[i] = append(per[i], (threadCPU()-start)*1e9/units)
			}
		}
	}
	for i, name := range names {
		p := per[i]
		slices.Sort(p)
		b.ReportMetric(p[len(p)/2], name+unit)
		b.ReportMetric(p[0], name+"min")
		b.ReportMetric(p[len(p)-1], name+"max")
	}
}
