package index

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// rankGrid is the parameter grid cross-validation chooses from: the hybrid's
// lexical weight, query expansion off or on with each combination of its
// settings, and the query's phrases off or at PhraseWeight. Order matters for ties: the first best wins, so simpler and
// more conservative settings come first.
func rankGrid() []RankParams {
	expansions := []ExpandParams{{}}
	for _, n := range []int{3, 6, 10} {
		for _, sim := range []float64{0.6, 0.5} {
			for _, w := range []float64{0.4, 0.7, 1.0} {
				for _, known := range []float64{0, 0.15, 0.3} {
					expansions = append(expansions, ExpandParams{Neighbours: n, MinSim: sim, Weight: w, MinDocs: 3, KnownScale: known})
				}
			}
		}
	}
	// Negation is the default's: the dev queries negate nothing, so it
	// changes none of their rankings (it is chosen on the judged queries,
	// TestJudgedCrossValidated).
	neg := DefaultRankParams().Negation
	var grid []RankParams
	for _, phrase := range []float64{0, PhraseWeight} {
		for _, x := range expansions {
			for _, lw := range []float64{0.8, 0.7, 0.9, 0.6, 1.0, 0.5} {
				grid = append(grid, RankParams{LexWeight: lw, Expand: x, Phrase: phrase, Negation: neg})
			}
		}
	}
	return grid
}

// scoreGrid returns per[c][q]: the nDCG@10 of grid config c on query q. Each
// query's vector candidates are computed once and each expansion's lexical
// candidates once per query; the fusion is the engine's ([fuse]).
func scoreGrid(t testing.TB, e *Engine, grid []RankParams, texts []string, qrels []map[string]int) [][]float64 {
	t.Helper()
	ctx := context.Background()
	vec := make([][]Hit, len(texts))
	for i, q := range texts {
		qv, err := e.embedQuery(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		vec[i] = e.vec.Search(qv, hybridVecPool, nil)
	}
	type gridKey struct {
		x      ExpandParams
		phrase float64
	}
	lexCache := map[gridKey][][]Hit{}
	per := make([][]float64, len(grid))
	for c, p := range grid {
		lex, ok := lexCache[gridKey{p.Expand, p.Phrase}]
		if !ok {
			lex = make([][]Hit, len(texts))
			for i, q := range texts {
				lex[i] = topHits(e.lex.Scores(e.searchTerms(q, p)), hybridLexPool, nil)
			}
			lexCache[gridKey{p.Expand, p.Phrase}] = lex
		}
		per[c] = make([]float64, len(texts))
		for i := range texts {
			per[c][i] = ndcgAt10(fuse(lex[i], vec[i], p.LexWeight, 10), qrels[i])
		}
	}
	return per
}

// best is the grid config with the highest mean over the queries in, and
// that mean; the first wins ties.
func best(per [][]float64, in []int) (int, float64) {
	bc, bm := -1, -1.0
	for c := range per {
		var s float64
		for _, q := range in {
			s += per[c][q]
		}
		if m := s / float64(len(in)); m > bm+1e-12 {
			bc, bm = c, m
		}
	}
	return bc, bm
}

func meanOf(per []float64, in []int) float64 {
	var s float64
	for _, q := range in {
		s += per[q]
	}
	return s / float64(len(in))
}

func describe(p RankParams) string {
	s := fmt.Sprintf("lex %.1f, no expansion", p.LexWeight)
	if x := p.Expand; x.Neighbours != 0 {
		s = fmt.Sprintf("lex %.1f, expand %d ≥%.1f ×%.1f known×%.2f", p.LexWeight, x.Neighbours, x.MinSim, x.Weight, x.KnownScale)
	}
	if p.Phrase > 0 {
		s += fmt.Sprintf(", phrases ×%.2f", p.Phrase)
	}
	if p.VecExpand > 0 {
		s += fmt.Sprintf(", vector expanded ×%.2f", p.VecExpand)
	}
	if f := p.Feedback; f.on() {
		s += fmt.Sprintf(", feedback %d docs %d terms ×%.2f", f.Docs, f.Terms, f.Weight)
	}
	return s
}

// TestMusicCapsCrossValidated chooses the ranking parameters by
// cross-validation over the 15 MusicCaps dev queries and reports how the
// choice does on queries it was not chosen on: leave-one-out (each query
// scored by the config chosen on the other 14) and 5-fold (3 queries held
// out per fold). The engine's defaults must be the config chosen on all 15,
// and the held-out means must stay above a floor. The project's own 15
// held-out queries (testdata/heldout-queries.json) are scored with the
// defaults as a second check; nothing is chosen on them.
func TestMusicCapsCrossValidated(t *testing.T) {
	e, ds := buildMusicCaps(t)
	grid := rankGrid()
	texts := make([]string, len(ds.queries))
	qrels := make([]map[string]int, len(ds.queries))
	for i, q := range ds.queries {
		texts[i], qrels[i] = q.Text, ds.qrels[q.ID]
	}
	per := scoreGrid(t, e, grid, texts, qrels)
	all := others(len(texts))
	without := func(out ...int) []int { return others(len(texts), out...) }

	// Leave one out.
	var heldOut, heldIn float64
	var b strings.Builder
	for q := range all {
		c, in := best(per, without(q))
		heldIn += in
		heldOut += per[c][q]
		fmt.Fprintf(&b, "\n  %s held out: chosen %-38s held-in %.4f, held-out %.4f", ds.queries[q].ID, describe(grid[c]), in, per[c][q])
	}
	loo := heldOut / float64(len(all))
	t.Logf("leave-one-out: mean held-in %.4f, mean held-out %.4f%s", heldIn/float64(len(all)), loo, b.String())

	// 5-fold, contiguous folds in file order.
	b.Reset()
	var fiveOut float64
	for f := range 5 {
		out := []int{3 * f, 3*f + 1, 3*f + 2}
		c, in := best(per, without(out...))
		m := meanOf(per[c], out)
		fiveOut += m / 5
		fmt.Fprintf(&b, "\n  fold %d (%s): chosen %-38s held-in %.4f, held-out %.4f", f+1,
			strings.Join([]string{ds.queries[out[0]].ID, ds.queries[out[1]].ID, ds.queries[out[2]].ID}, ","), describe(grid[c]), in, m)
	}
	t.Logf("5-fold: mean held-out %.4f%s", fiveOut, b.String())

	c, dev := best(per, all)
	t.Logf("chosen on all 15: %s, dev nDCG@10 %.4f (defaults: %s)", describe(grid[c]), dev, describe(DefaultRankParams()))
	if grid[c] != DefaultRankParams() {
		t.Errorf("DefaultRankParams = %+v, want the config cross-validation chooses on all dev queries, %+v", DefaultRankParams(), grid[c])
	}
	// The baseline, the old defaults (lex 0.8, no expansion), for comparison.
	base := slices.Index(grid, RankParams{LexWeight: 0.8, Negation: DefaultRankParams().Negation})
	t.Logf("old defaults (%s): dev %.4f", describe(grid[base]), meanOf(per[base], all))

	// The target (issue 13), a little below the measured 0.731 and 0.726.
	if loo < 0.72 || fiveOut < 0.72 {
		t.Errorf("held-out nDCG@10: leave-one-out %.4f, 5-fold %.4f; want ≥ 0.72", loo, fiveOut)
	}

	// The own held-out queries, through the engine's public search.
	hq := loadHeldout(t)
	hrels := heldoutQrels(hq, ds.docs)
	for _, mode := range []Mode{Lexical, Semantic, Hybrid} {
		var sum float64
		b.Reset()
		for _, q := range hq {
			hits, err := e.SearchMode(context.Background(), mode, q.Text, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := ndcgAt10(hits, hrels[q.ID])
			sum += n
			fmt.Fprintf(&b, " %s=%.2f", q.ID, n)
		}
		t.Logf("own held-out, %-8v mean nDCG@10 = %.4f |%s", mode, sum/float64(len(hq)), b.String())
	}
}

// others lists the query indexes 0…n-1 but out.
func others(n int, out ...int) []int {
	var in []int
	for q := range n {
		if !slices.Contains(out, q) {
			in = append(in, q)
		}
	}
	return in
}
