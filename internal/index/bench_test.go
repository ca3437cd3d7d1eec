package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/philippgille/chromem-go"
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

// BenchmarkVectorSearch compares, in one run, this package's index (codes
// with an error bound, then exact rescoring), the fixed-candidate search it
// had before, the exact float32 scan and chromem-go's exhaustive search on
// 384-d vectors, k = 10, from both generators. Each iteration runs several
// rounds; in a round every method answers its queries, in an order that
// rotates between rounds so that load drifts hit all alike. It reports each
// method's median, min and max time per query over the rounds, its recall@10
// against the exact answer, how many vectors the index rescored per query,
// and the index's heap bytes per vector.
//
// The 1M-vector cases take minutes and ~5 GB; they run only with
// TOOLPORT_BENCH_1M=1. Run with -cpu 1 -benchtime 1x:
//
//	go test -run NONE -bench VectorSearch -benchtime 1x -cpu 1 ./internal/index/
//	TOOLPORT_BENCH_1M=1 go test -run NONE -bench 'VectorSearch/.*/1M' -benchtime 1x -cpu 1 -timeout 60m ./internal/index/
func BenchmarkVectorSearch(b *testing.B) {
	gens := []struct {
		name     string
		generate func(n, queries, dims int, seed uint64) (vecs, qs [][]float32)
	}{{"clustered", clustered}, {"uniform", uniform}}
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
	nq, nSlow := 200, 20 // queries per round: all for the quantized searches, the first nSlow for the scans
	if n > 100_000 {
		nq, nSlow = 100, 4
	}
	vecs, qs := generate(n, nq, dims, 42)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("id%07d", i)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	x := NewVectorIndex(dims)
	if err := x.AddBatch(ids, vecs); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	// ids are shared with the caller's slice, so count their bytes too.
	perVector := (float64(m1.HeapAlloc) - float64(m0.HeapAlloc) + float64(n*(16+len(ids[0])))) / float64(n)

	truth := make([][]Hit, nq)
	for i, q := range qs {
		truth[i] = x.SearchExact(q, k, nil)
	}
	old := newHammingBaseline(x, DefaultCandidatesBefore, 100)
	db := chromem.NewDB()
	col, err := db.CreateCollection("bench", nil, func(context.Context, string) ([]float32, error) {
		return nil, fmt.Errorf("not used")
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := col.Add(context.Background(), ids, vecs, nil, nil); err != nil {
		b.Fatal(err)
	}
	vecs = nil

	type method struct {
		name    string
		queries int
		search  func(q []float32) []Hit
		perQ    []float64 // ms per query, one per round
		recall  float64
		answers int
	}
	var rescored, searches int
	methods := []*method{
		{name: "bound", queries: nq, search: func(q []float32) []Hit {
			h, r := x.search(q, k, nil)
			rescored += r
			searches++
			return h
		}},
		{name: "fixed8000", queries: nq, search: func(q []float32) []Hit { return old.search(q, k) }},
		{name: "exact", queries: nSlow, search: func(q []float32) []Hit { return x.SearchExact(q, k, nil) }},
		{name: "chromem", queries: nSlow, search: func(q []float32) []Hit {
			res, err := col.QueryEmbedding(context.Background(), q, k, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			hits := make([]Hit, len(res))
			for i, r := range res {
				hits[i] = Hit{ID: r.ID, Score: float64(r.Similarity)}
			}
			return hits
		}},
	}
	for b.Loop() {
		for round := range rounds {
			for i := range methods {
				m := methods[(i+round)%len(methods)]
				start := time.Now()
				for j := range m.queries {
					got := m.search(qs[j])
					m.recall += recallAt(got, truth[j])
					m.answers++
				}
				m.perQ = append(m.perQ, float64(time.Since(start).Microseconds())/1000/float64(m.queries))
			}
		}
	}
	for _, m := range methods {
		slices.Sort(m.perQ)
		b.ReportMetric(m.perQ[len(m.perQ)/2], m.name+"-ms/q")
		b.ReportMetric(m.perQ[0], m.name+"-min-ms/q")
		b.ReportMetric(m.perQ[len(m.perQ)-1], m.name+"-max-ms/q")
		b.ReportMetric(m.recall/float64(m.answers), m.name+"-recall@10")
	}
	b.ReportMetric(float64(rescored)/float64(searches), "bound-rescored/q")
	b.ReportMetric(perVector, "B/vector")
}

// DefaultCandidatesBefore is the fixed candidate count of the search the
// index had before (see hammingBaseline).
const DefaultCandidatesBefore = 8000

// BenchmarkErrorBound shows the recall/speed trade-off of the error bound
// multiplier (see VectorIndex.SetErrorBound) on 100k uniform vectors.
func BenchmarkErrorBound(b *testing.B) {
	const n, nq, dims, k = 100_000, 200, 384, 10
	vecs, qs := uniform(n, nq, dims, 42)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("id%06d", i)
	}
	x := NewVectorIndex(dims)
	if err := x.AddBatch(ids, vecs); err != nil {
		b.Fatal(err)
	}
	truth := make([][]Hit, nq)
	for i, q := range qs {
		truth[i] = x.SearchExact(q, k, nil)
	}
	for _, eps := range []float64{1.5, 2, 2.5, 3} {
		b.Run(fmt.Sprint(eps), func(b *testing.B) {
			x.SetErrorBound(eps)
			var recall float64
			var queries, rescored int
			for i := 0; b.Loop(); i++ {
				got, r := x.search(qs[i%nq], k, nil)
				recall += recallAt(got, truth[i%nq])
				rescored += r
				queries++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(queries), "ms/query")
			b.ReportMetric(recall/float64(queries), "recall@10")
			b.ReportMetric(float64(rescored)/float64(queries), "rescored/query")
		})
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
