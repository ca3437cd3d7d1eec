package index

import (
	"context"
	"fmt"

	"github.com/toolport/toolport/internal/embedding"
)

// RankParams are the ranking's tunable parameters. [DefaultRankParams] are
// the ones chosen by cross-validation over the MusicCaps dev queries
// (TestMusicCapsCrossValidated).
type RankParams struct {
	// LexWeight is the weight of the min-max normalised BM25 score in the
	// hybrid; the normalised cosine gets 1−LexWeight.
	LexWeight float64
	// Expand configures query expansion on the lexical side; it needs an
	// embedder with word vectors ([embedding.WordVectorSource]).
	Expand ExpandParams
}

// DefaultRankParams returns the engine's default parameters.
func DefaultRankParams() RankParams {
	return RankParams{
		LexWeight: 0.9,
		Expand:    ExpandParams{Neighbours: 6, MinSim: 0.6, Weight: 1, MinDocs: 3, KnownScale: 0},
	}
}

// Candidate pools of the hybrid: BM25 carries most of the weight because its
// exact matches on instruments and genres are precise; the vector score
// reorders among them and rescues queries whose words the index does not
// contain (then only the vector side has scores).
const (
	hybridLexPool = 1000 // BM25 candidates taken before fusion
	hybridVecPool = 1000 // vector candidates: the same depth, so both sides are normalised alike
)

// SetRankParams replaces the engine's ranking parameters (for evaluation and
// for deployments that tune their own).
func (e *Engine) SetRankParams(p RankParams) {
	e.rankMu.Lock()
	e.rank = p
	e.rankMu.Unlock()
}

// RankParams returns the engine's ranking parameters.
func (e *Engine) RankParams() RankParams {
	e.rankMu.RLock()
	defer e.rankMu.RUnlock()
	return e.rank
}

// search ranks query in mode with parameters p.
func (e *Engine) search(ctx context.Context, p RankParams, mode Mode, query string, k int, filter func(id string) bool) ([]Hit, error) {
	if k <= 0 {
		return []Hit{}, nil
	}
	if len(query) > MaxQueryBytes {
		query = query[:MaxQueryBytes]
	}
	switch mode {
	case Lexical:
		return e.lex.Top(e.lexicalTerms(query, p.Expand), k, filter), nil
	case Semantic:
		qv, err := e.embedQuery(ctx, query)
		if err != nil {
			return nil, err
		}
		return e.vec.Search(qv, k, filter), nil
	case Hybrid:
		return e.hybrid(ctx, p, query, k, filter)
	}
	return nil, fmt.Errorf("index: unknown mode %v", mode)
}

// lexicalTerms is the weighted BM25 query: the query's terms, expanded when
// p asks for it and the embedder has word vectors.
func (e *Engine) lexicalTerms(query string, p ExpandParams) map[string]float64 {
	src, ok := e.emb.(embedding.WordVectorSource)
	if !ok || p.Neighbours <= 0 || p.Weight <= 0 {
		return queryTerms(query)
	}
	return e.exp.get(src, e.lex, p.MinDocs).expandQuery(src, query, p)
}

// hybrid fuses min-max normalised BM25 and cosine scores over the union of
// each side's best candidates; a document missing from one side gets nothing
// from it.
func (e *Engine) hybrid(ctx context.Context, p RankParams, query string, k int, filter func(id string) bool) ([]Hit, error) {
	qv, err := e.embedQuery(ctx, query)
	if err != nil {
		return nil, err
	}
	// Fusion needs each side's set and its best and worst scores, not
	// their order.
	lex := e.lex.top(e.lexicalTerms(query, p.Expand), max(hybridLexPool, k), filter)
	vec := e.vec.pool(qv, max(hybridVecPool, k), filter)
	return fuse(lex, vec, p.LexWeight, k), nil
}

// fuse is the hybrid's fusion of each side's candidates, best first.
func fuse(lex, vec []Hit, lexWeight float64, k int) []Hit {
	fused := make(map[string]float64, len(lex)+len(vec))
	addNormalised(fused, lex, lexWeight)
	addNormalised(fused, vec, 1-lexWeight)
	return topHits(fused, k, nil)
}
