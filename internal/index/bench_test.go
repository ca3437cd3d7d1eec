package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

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

// BenchmarkSearch100k384 searches 100,000 384-d vectors for the 10 nearest,
// reporting ms/query and recall@10 against the exact float32 answer, for this
// package's index (quantized scan + exact rescoring, and the plain exact scan)
// and for chromem-go's exhaustive search. Run with -cpu 1 for one core.
func BenchmarkSearch100k384(b *testing.B) {
	const n, nq, dims, k = 100_000, 200, 384, 10
	vecs, qs := clustered(n, nq, dims, 42)
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
	run := func(name string, search func(q []float32) []Hit) {
		b.Run(name, func(b *testing.B) {
			var recall float64
			var queries int
			for i := 0; b.Loop(); i++ {
				got := search(qs[i%nq])
				recall += recallAt(got, truth[i%nq])
				queries++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(queries), "ms/query")
			b.ReportMetric(recall/float64(queries), "recall@10")
		})
	}
	run("quantized", func(q []float32) []Hit { return x.Search(q, k, nil) })
	run("exact", func(q []float32) []Hit { return x.SearchExact(q, k, nil) })

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
	run("chromem-go", func(q []float32) []Hit {
		res, err := col.QueryEmbedding(context.Background(), q, k, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		hits := make([]Hit, len(res))
		for i, r := range res {
			hits[i] = Hit{ID: r.ID, Score: float64(r.Similarity)}
		}
		return hits
	})
}

// BenchmarkCandidates shows the recall/speed trade-off of the number of
// candidates rescored exactly.
func BenchmarkCandidates(b *testing.B) {
	const n, nq, dims, k = 100_000, 200, 384, 10
	vecs, qs := clustered(n, nq, dims, 42)
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
	for _, c := range []int{1000, 2000, 4000, 8000} {
		b.Run(fmt.Sprint(c), func(b *testing.B) {
			x.SetCandidates(c, 1)
			var recall float64
			var queries int
			for i := 0; b.Loop(); i++ {
				recall += recallAt(x.Search(qs[i%nq], k, nil), truth[i%nq])
				queries++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(queries), "ms/query")
			b.ReportMetric(recall/float64(queries), "recall@10")
		})
	}
}
