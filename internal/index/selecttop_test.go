package index

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

// sortTop is the reference selectTop is held to: sort everything, keep k.
func sortTop(hits []Hit, k int) []Hit {
	s := slices.Clone(hits)
	slices.SortFunc(s, byScore)
	return s[:min(k, len(s))]
}

// TestSelectTop: the k first of a total order, in order, whatever the size,
// k, the share of ties and the input order (sorted, reversed, random).
func TestSelectTop(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 2, 3, 16, 17, 100, 1000, 5521} {
		for _, k := range []int{0, 1, 10, 100, 1000, 6000} {
			for _, levels := range []int{1, 3, 1 << 30} { // all tied, many ties, few ties
				for _, order := range []string{"random", "sorted", "reversed"} {
					hits := make([]Hit, n)
					for i := range hits {
						hits[i] = Hit{ID: fmt.Sprintf("t%05d", r.IntN(1<<20)), Score: float64(r.IntN(levels))}
					}
					switch order {
					case "sorted":
						slices.SortFunc(hits, byScore)
					case "reversed":
						slices.SortFunc(hits, func(a, b Hit) int { return byScore(b, a) })
					}
					want := sortTop(hits, k)
					if got := selectTop(slices.Clone(hits), k, byScore); !slices.Equal(got, want) {
						t.Fatalf("n=%d k=%d levels=%d %s: differs from a full sort", n, k, levels, order)
					}
				}
			}
		}
	}
}

// refHybrid is the engine's ranking as it was before the selections and the
// reused scratch: a map of BM25 scores sorted whole, the vector side by the
// heap (the filtered exact scan), fusion sorted whole.
func refHybrid(ctx context.Context, t *testing.T, e *Engine, mode Mode, query string, k int, filter func(string) bool) []Hit {
	t.Helper()
	p := e.RankParams()
	lexSide := func(k int) []Hit { return sortTopMap(e.lex.Scores(e.searchTerms(query, p)), k, filter) }
	vecSide := func(k int) []Hit {
		qv, err := e.embedQuery(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		all := filter
		if all == nil {
			all = func(string) bool { return true } // the heap path
		}
		return e.vec.SearchExact(qv, k, all)
	}
	switch mode {
	case Lexical:
		return lexSide(k)
	case Semantic:
		return vecSide(k)
	}
	lex, vec := lexSide(max(hybridLexPool, k)), vecSide(max(hybridVecPool, k))
	fused := map[string]float64{}
	addNormalised(fused, lex, p.LexWeight)
	addNormalised(fused, vec, 1-p.LexWeight)
	return sortTopMap(fused, k, nil)
}

func sortTopMap(scores map[string]float64, k int, filter func(string) bool) []Hit {
	var hits []Hit
	for id, s := range scores {
		if filter == nil || filter(id) {
			hits = append(hits, Hit{id, s})
		}
	}
	return sortTop(hits, k)
}

// TestSearchSameAsFullSort: over the MusicCaps tracks and dev queries (and
// queries the captions barely hold), every mode returns the same ids and
// scores, in the same order, as the ranking computed by sorting everything,
// at the depths the tools ask for, with and without a filter.
func TestSearchSameAsFullSort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the MusicCaps index")
	}
	ctx := context.Background()
	e, ds := buildMusicCaps(t)
	queries := []string{"city lights at four", "x", "piano piano piano", "not sad, not slow", "heartbroken"}
	for _, q := range ds.queries {
		queries = append(queries, q.Text)
	}
	odd := func(id string) bool { return id[len(id)-1]%2 == 1 }
	for _, mode := range []Mode{Lexical, Semantic, Hybrid} {
		for _, k := range []int{1, 10, 100, 1000, 6000} {
			for _, filtered := range []bool{false, true} {
				var filter func(string) bool
				if filtered {
					filter = odd
				}
				for _, q := range queries {
					got, err := e.SearchMode(ctx, mode, q, k, filter)
					if err != nil {
						t.Fatal(err)
					}
					want := refHybrid(ctx, t, e, mode, q, k, filter)
					if len(want) == 0 && len(got) == 0 {
						continue
					}
					if !slices.Equal(got, want) {
						t.Errorf("%v k=%d filtered=%v %q: %d hits, want %d; first %v, want %v",
							mode, k, filtered, q, len(got), len(want), head(got), head(want))
					}
				}
			}
		}
	}
}

func head(h []Hit) string {
	var b strings.Builder
	for _, x := range h[:min(3, len(h))] {
		fmt.Fprintf(&b, "%s:%.6f ", x.ID, x.Score)
	}
	return b.String()
}

// TestExpansionCacheSameTerms: the weighted terms of a query are the same
// whether its words' neighbours come from a cold cache (a fresh candidate
// set per query) or a warm one, for every dev query and some words the
// vocabulary lacks.
func TestExpansionCacheSameTerms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the MusicCaps index")
	}
	e, ds := buildMusicCaps(t)
	src := e.emb.(embedding.WordVectorSource)
	p := e.RankParams().Expand
	queries := []string{"melancholic lullabies", "groovy heartbroken singer", "zzqxv joyful"}
	for _, q := range ds.queries {
		queries = append(queries, q.Text)
	}
	warm := buildExpansionTerms(src, e.lex, p.MinDocs)
	for range 2 {
		for _, q := range queries {
			warm.expandQuery(src, q, p)
		}
	}
	for _, q := range queries {
		cold := buildExpansionTerms(src, e.lex, p.MinDocs).expandQuery(src, q, p)
		if got := warm.expandQuery(src, q, p); !maps.Equal(got, cold) {
			t.Errorf("%q: warm %v, cold %v", q, got, cold)
		}
		if len(cold) == 0 {
			t.Errorf("%q: no terms", q)
		}
	}
}
