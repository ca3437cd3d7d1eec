package index_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/index/weaviate"
	"github.com/toolport/toolport/internal/index/weaviate/weaviatetest"
)

// TestJudgedWeaviate measures the judged queries through the Weaviate
// backend (one local node, over gRPC), before and after negation is parsed:
// before, the whole query is searched and embedded, as the backend did;
// after, the kept words are, and the tracks holding a negated word are
// demoted (index.DropNegation, weaviate.Query.Negated). Nothing is fitted
// here (the demotion is the engine's default, chosen by
// TestJudgedCrossValidated), so the figures are not cross-validated. The
// embedded engine at Weaviate's settings (its fusion, no expansion, no
// phrases, the same negation) is logged beside them. What it costs in time
// is weaviate's BenchmarkNegatedSearch.
func TestJudgedWeaviate(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	js := index.LoadJudgedSet(t)
	ctx := context.Background()
	emb, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(js.Docs))
	for i, d := range js.Docs {
		texts[i] = index.EmbeddingText(d.Fields)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	tracks := make([]weaviate.Track, len(js.Docs))
	for i, d := range js.Docs {
		js.Docs[i].Vector = vecs[i]
		tracks[i] = weaviate.Track{ISRC: d.ID, Fields: d.Fields, Vector: vecs[i], Embedder: emb.Name()}
	}
	b := weaviatetest.Load(t, weaviate.Config{URL: c.Nodes[0].URL(), GRPCAddr: c.Nodes[0].GRPCAddr, Collection: "JudgedNegation", Timeout: time.Minute}, tracks)
	eng := index.NewEngine(emb)
	if err := eng.Add(ctx, js.Docs); err != nil {
		t.Fatal(err)
	}
	// engine ranks with the embedded engine at p.
	engine := func(p index.RankParams) func(string) ([]index.Hit, error) {
		return func(q string) ([]index.Hit, error) {
			eng.SetRankParams(p)
			return eng.Search(ctx, q, 10, nil)
		}
	}
	atWeaviates := index.RankParams{LexWeight: 1 - weaviate.DefaultAlpha,
		Negation: index.NegationParams{Drop: true, Demote: index.DefaultRankParams().Negation.Demote}}

	viaWeaviate := func(text, negated string) ([]index.Hit, error) {
		vs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return b.Search(ctx, weaviate.Query{Text: text, Negated: negated, Vector: vs[0], Embedder: emb.Name(), K: 10})
	}
	demoting := func(q string) ([]index.Hit, error) { return viaWeaviate(index.DropNegation(q)) }
	runs := []struct {
		name   string
		search func(q string) ([]index.Hit, error)
	}{
		{"Weaviate, whole query searched (before)", func(q string) ([]index.Hit, error) { return viaWeaviate(q, "") }},
		{"Weaviate, negated words dropped and demoted", demoting},
		{"embedded at Weaviate's settings, dropped and demoted", engine(atWeaviates)},
		{"embedded default (for reference)", engine(index.DefaultRankParams())},
	}
	var tbl strings.Builder
	tbl.WriteString("\n| ranking | all queries | negation queries | multi-aspect |\n|---|---|---|---|")
	type figures struct{ all, negation float64 }
	got := make([]figures, len(runs))
	perQuery := make([]strings.Builder, len(runs)) // the negation queries' nDCG@10
	for r, run := range runs {
		sum := map[string]float64{}
		n := map[string]int{}
		for _, q := range js.Queries {
			hits, err := run.search(q.Text)
			if err != nil {
				t.Fatalf("%s: %q: %v", run.name, q.Text, err)
			}
			s := index.NDCGAt10(hits, js.Qrels[q.ID])
			if q.Kind == "negation" {
				fmt.Fprintf(&perQuery[r], " %s=%.2f", q.ID, s)
			}
			sum[q.Kind] += s
			n[q.Kind]++
			sum[""] += s
			n[""]++
		}
		got[r] = figures{sum[""] / float64(n[""]), sum["negation"] / float64(n["negation"])}
		fmt.Fprintf(&tbl, "\n| %s | %.4f | %.4f | %.4f |", run.name, got[r].all, got[r].negation, sum["multi"]/float64(n["multi"]))
	}
	t.Log(tbl.String())
	for r, run := range runs {
		t.Logf("%s, negation queries:%s", run.name, perQuery[r].String())
	}
	before, after := got[0], got[1]
	// The negation queries must gain by far more than noise; the others are
	// searched as before (a query without a negated word is unchanged).
	if after.negation < before.negation+0.3 {
		t.Errorf("negation queries through Weaviate: nDCG@10 %.4f after, %.4f before; want a gain of at least 0.3", after.negation, before.negation)
	}
	if after.all < before.all {
		t.Errorf("all queries through Weaviate: nDCG@10 %.4f after, %.4f before; want no loss", after.all, before.all)
	}
}
