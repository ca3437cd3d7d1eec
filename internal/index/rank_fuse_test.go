package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestHybridExactSameAsFuse: the fusion over vector slots gives the same
// hits, scores to the bit, as the vector pool fused with the lexical pool by
// id, while the two indexes number documents alike, after removals and
// re-additions have made their numberings differ, and when a lexical
// document has no vector (it falls back to fuse for the queries that find it).
func TestHybridExactSameAsFuse(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"red", "crimson", "green", "blue", "azure", "piano", "guitar", "slow", "fast", "drums", "choir", "bass"}
	doc := func(i int) Document {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		return Document{ID: fmt.Sprintf("T%05d", i), Fields: Fields{Title: b.String(), Interpretation: b.String()}}
	}
	e := NewEngine(&fakeEmbedder{})
	var docs []Document
	for i := range 1600 { // more than either pool, so the pools' edges are exercised
		docs = append(docs, doc(i))
	}
	if err := e.Add(ctx, docs); err != nil {
		t.Fatal(err)
	}
	queries := []string{"red piano", "azure", "slow slow choir", "zzz", "green fast drums bass", ""}
	check := func(stage string, noVector string) {
		t.Helper()
		p := e.RankParams()
		for _, q := range queries {
			for _, k := range []int{1, 10, 1000, 2000} {
				got, err := e.Search(ctx, q, k, nil)
				if err != nil {
					t.Fatal(err)
				}
				terms := e.searchTerms(q, p)
				qv, err := e.embedQuery(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				want := fuse(e.lex.top(terms, max(hybridLexPool, k), nil), e.vec.pool(qv, max(hybridVecPool, k), nil), p.LexWeight, k)
				if !slices.Equal(got, want) || (got == nil) != (want == nil) {
					t.Errorf("%s %q k=%d: %d hits, want %d; first %v, want %v", stage, q, k, len(got), len(want), head(got), head(want))
				}
				slots, done := e.lex.topSlots(terms, max(hybridLexPool, k), nil)
				wantExact := !slices.ContainsFunc(slots, func(h slotHit) bool { return h.ID == noVector })
				_, exact := e.vec.hybridExact(qv, slots, max(hybridVecPool, k), p.LexWeight, k)
				done()
				if exact != wantExact {
					t.Errorf("%s %q k=%d: fused over slots %v, want %v", stage, q, k, exact, wantExact)
				}
			}
		}
	}
	check("added", "")

	for _, i := range rng.Perm(len(docs))[:300] {
		e.Remove(docs[i].ID)
	}
	var again []Document
	for i := range 200 {
		again = append(again, doc(len(docs)+i), docs[rng.IntN(len(docs))])
	}
	if err := e.Add(ctx, again); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for s, id := range e.lex.ids {
		if s >= len(e.vec.ids) || e.vec.ids[s] != id {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("the indexes still number documents alike; the test needs them apart")
	}
	check("removed and re-added", "")

	e.lex.Add("lexical-only", Fields{Title: "red azure piano slow"})
	check("a lexical document without a vector", "lexical-only")
}

// TestLargestSlotsSameAsSelectSet: largestSlots keeps the set selectSet
// keeps by bySlotScore, ties at the k-th score going to the lowest slots,
// for orders quickselect finds hard (sorted, reversed, all equal) and for
// scores with many ties; a NaN is refused.
func TestLargestSlotsSameAsSelectSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gen := map[string]func(n int) []float32{
		"random": func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = rng.Float32()*2 - 1
			}
			return s
		},
		"few values": func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(rng.IntN(5)) / 4
			}
			return s
		},
		"ascending": func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(i)
			}
			return s
		},
		"descending": func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(n - i)
			}
			return s
		},
		"equal": func(n int) []float32 { return make([]float32, n) },
	}
	for name, g := range gen {
		for _, n := range []int{0, 1, 2, 17, 1000, 5521} {
			scores := g(n)
			for _, k := range []int{0, 1, 2, 10, 999, 1000, 1001, n - 1, n, n + 1} {
				all := make([]slotScore, n)
				for i, s := range scores {
					all[i] = slotScore{int32(i), s}
				}
				want := selectSet(all, k, bySlotScore)
				slices.SortFunc(want, func(a, b slotScore) int { return int(a.slot - b.slot) })
				got, ok := largestSlots(nil, scores, make([]float32, n), k)
				if !ok || !slices.Equal(got, want) {
					t.Errorf("%s n=%d k=%d: ok=%v, %d slots, want %d", name, n, k, ok, len(got), len(want))
				}
			}
		}
	}
	scores := gen["random"](100)
	scores[40] = float32(math.NaN())
	for _, k := range []int{10, 100} {
		if _, ok := largestSlots(nil, scores, make([]float32, 100), k); ok {
			t.Errorf("k=%d: a NaN accepted", k)
		}
	}
}
