package index

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

// judgedFamily is a candidate change under cross-validation: the settings
// it may choose among (one setting: nothing is chosen).
type judgedFamily struct {
	name     string
	settings []RankParams
	// kept marks the family whose choice on all folds is the engine's
	// default.
	kept bool
	// negIndex runs the family on the tracks indexed with negation marked
	// (negationTerms: "no vocals" in a caption indexes not:vocal, so a
	// caption that says so is not demoted for holding "vocals").
	negIndex bool
}

// judgedFamilies are the candidates tried on the judged queries, the first
// being today's ranking before negation was parsed.
func judgedFamilies() []judgedFamily {
	base := DefaultRankParams()
	base.Negation = NegationParams{}
	with := func(n NegationParams) RankParams {
		p := base
		p.Negation = n
		return p
	}
	demotes := func(expand bool) []RankParams {
		var out []RankParams
		for _, w := range []float64{0.1, 0.25, 0.5, 1} {
			out = append(out, with(NegationParams{Drop: true, Demote: w, DemoteExpand: expand}))
		}
		return out
	}
	all := []RankParams{base, with(NegationParams{Drop: true})}
	all = append(all, demotes(false)...)
	all = append(all, demotes(true)...)
	def := DefaultRankParams()
	coords := func(from RankParams) []RankParams {
		out := []RankParams{from}
		for _, w := range []float64{0.05, 0.1, 0.2, 0.3, 0.5, 1} {
			p := from
			p.Coord = w
			out = append(out, p)
		}
		return out
	}
	return []judgedFamily{
		{"negated words searched for (before)", []RankParams{base}, false, false},
		{"negated words dropped", []RankParams{with(NegationParams{Drop: true})}, false, false},
		{"dropped, demoted ×0.1/0.25/0.5/1", demotes(false), false, false},
		{"dropped, demoted with expansion ×0.1/0.25/0.5/1", demotes(true), false, false},
		{"any of the above", all, true, false},
		{"the default (nothing chosen)", []RankParams{def}, false, false},
		{"the default on a negation-marked index", []RankParams{def}, false, true},
		{"the default, or with coordination ×0.05/0.1/0.2/0.3/0.5/1", coords(def), false, false},
	}
}

func describeJudged(p RankParams) string {
	s := describeNegation(p.Negation)
	if p.Coord > 0 {
		s += fmt.Sprintf(", coordination ×%.2f", p.Coord)
	}
	return s
}

func describeNegation(n NegationParams) string {
	switch {
	case !n.Drop:
		return "negated words searched for"
	case n.Demote == 0:
		return "negated words dropped"
	case n.DemoteExpand:
		return fmt.Sprintf("dropped, demoted ×%.2f, expanded", n.Demote)
	}
	return fmt.Sprintf("dropped, demoted ×%.2f", n.Demote)
}

// TestJudgedCrossValidated scores the judged queries of every kind
// (testdata/judged-queries.jsonl) by 5-fold cross-validation over their
// fixed folds: for each candidate family, each fold is scored by the
// setting chosen on the other four. The engine's default must be the
// setting chosen on all folds from every family tried, and the mean
// held-out nDCG@10 must stay above a floor.
func TestJudgedCrossValidated(t *testing.T) {
	e, ds := buildMusicCaps(t)
	qs := loadJudged(t)
	qrels := judgedQrels(qs, ds.docs)
	families := judgedFamilies()

	wv, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	negEngine := NewEngine(wv)
	negEngine.lex = newBM25With(negationTerms)
	if err := negEngine.Add(context.Background(), ds.docs); err != nil {
		t.Fatal(err)
	}
	type scoreKey struct {
		p        RankParams
		negIndex bool
	}
	// per[k] is each query's nDCG@10 under setting k.p on its index.
	per := map[scoreKey][]float64{}
	onNeg := false // the index the family being scored runs on
	score := func(p RankParams) []float64 {
		key := scoreKey{p, onNeg}
		if s, ok := per[key]; ok {
			return s
		}
		eng := e
		if onNeg {
			eng = negEngine
		}
		s := make([]float64, len(qs))
		for i, q := range qs {
			hits, err := eng.search(context.Background(), p, Hybrid, q.Text, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			s[i] = ndcgAt10(hits, qrels[q.ID])
		}
		per[key] = s
		return s
	}
	inFolds := func(keep func(int) bool) []int {
		var out []int
		for i, q := range qs {
			if keep(q.Fold) {
				out = append(out, i)
			}
		}
		return out
	}
	mean := func(s []float64, in []int) float64 {
		var sum float64
		for _, i := range in {
			sum += s[i]
		}
		return sum / float64(len(in))
	}
	choose := func(f judgedFamily, in []int) RankParams {
		bp, bm := f.settings[0], -1.0
		for _, p := range f.settings {
			if m := mean(score(p), in); m > bm+1e-12 {
				bp, bm = p, m
			}
		}
		return bp
	}

	var b strings.Builder
	b.WriteString("\n| candidate | fold 1 | fold 2 | fold 3 | fold 4 | fold 5 | cross-validated mean | negation queries | multi-aspect queries | chosen on all folds |\n|---|---|---|---|---|---|---|---|---|---|")
	byKind := func(held []float64, kind string) float64 {
		var sum float64
		n := 0
		for i, q := range qs {
			if q.Kind == kind {
				sum += held[i]
				n++
			}
		}
		return sum / float64(n)
	}
	// The default must be what the kept family chooses on all folds.
	var chosenAll RankParams
	var cvAll float64
	for _, f := range families {
		onNeg = f.negIndex
		held := make([]float64, len(qs))
		fmt.Fprintf(&b, "\n| %s |", f.name)
		for fold := range judgedFolds {
			train := inFolds(func(k int) bool { return k != fold })
			test := inFolds(func(k int) bool { return k == fold })
			p := choose(f, train)
			for _, i := range test {
				held[i] = score(p)[i]
			}
			fmt.Fprintf(&b, " %.4f |", mean(held, test))
		}
		all := inFolds(func(int) bool { return true })
		cv := mean(held, all)
		chosen := choose(f, all)
		fmt.Fprintf(&b, " %.4f | %.4f | %.4f | %s |", cv, byKind(held, "negation"), byKind(held, "multi"), describeJudged(chosen))
		if f.kept {
			chosenAll, cvAll = chosen, cv
		}
	}
	t.Log(b.String())

	onNeg = false
	// Per kind, today's ranking against the default, both unchosen.
	b.Reset()
	b.WriteString("\n| kind | before | default |\n|---|---|---|")
	before, def := score(families[0].settings[0]), score(DefaultRankParams())
	for _, k := range judgedKinds {
		fmt.Fprintf(&b, "\n| %s | %.4f | %.4f |", k, byKind(before, k), byKind(def, k))
	}
	t.Log(b.String())
	b.Reset()
	for i, q := range qs {
		fmt.Fprintf(&b, " %s=%.2f/%.2f", q.ID, before[i], def[i])
	}
	t.Logf("per query, before/default:%s", b.String())

	if DefaultRankParams() != chosenAll {
		t.Errorf("DefaultRankParams() = %s, want the setting chosen on all folds, %s", describeJudged(DefaultRankParams()), describeJudged(chosenAll))
	}
	// Floors a little below the measured 0.9125 and, for the negation
	// queries, 0.8268 (0.1363 before negation was parsed).
	if cvAll < 0.90 {
		t.Errorf("cross-validated nDCG@10 %.4f, want ≥ 0.90", cvAll)
	}
	if n := byKind(def, "negation"); n < 0.80 {
		t.Errorf("negation queries: nDCG@10 %.4f with the default, want ≥ 0.80", n)
	}
}
