package index

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/toolport/toolport/internal/embedding"
)

// RankParams are the ranking's tunable parameters. [DefaultRankParams] are
// the ones chosen by cross-validation over the MusicCaps dev queries
// (TestMusicCapsCrossValidated), and for negation over the judged queries
// (TestJudgedCrossValidated).
type RankParams struct {
	// LexWeight is the weight of the min-max normalised BM25 score in the
	// hybrid; the normalised cosine gets 1−LexWeight.
	LexWeight float64
	// Expand configures query expansion on the lexical side; it needs an
	// embedder with word vectors ([embedding.WordVectorSource]).
	Expand ExpandParams
	// Feedback configures pseudo-relevance feedback on the hybrid: the
	// lexical side is searched again with terms of the first pass's best
	// documents (rank_feedback.go).
	Feedback FeedbackParams
	// Phrase is the query weight of each pair of the query's terms that
	// follow each other (a query word's own weight is 1): captions that
	// say "acoustic guitar" rank above those with "acoustic drums" and an
	// "electric guitar" (the ordered-phrase part of Metzler and Croft's
	// sequential dependence model). 0 turns it off; the default is
	// [PhraseWeight].
	Phrase float64
	// VecExpand moves the vector side's query towards the word vectors of
	// the expansion terms by this weight (expand.go, expandVector); 0
	// leaves it alone.
	VecExpand float64
	// Negation is what the ranking does with the words a query negates
	// ("piano without vocals", "not sad").
	Negation NegationParams
	// Coord adds Coord × the share of the query's terms a candidate's
	// text holds to its fused score (a coordination factor): for a query
	// of several aspects ("slow sad piano"), a track with all of them
	// above one that matches one very well. 0 turns it off.
	Coord float64
}

// NegationParams say how a query's negated words ([SplitNegation]) count.
// The zero value searches for them like any other word (the ranking before
// negation was parsed).
type NegationParams struct {
	// Drop leaves the negated words out of what both sides search for.
	Drop bool
	// Demote, when Drop is set, lowers the fused score of each candidate
	// whose text holds a negated word by Demote (by less for a word that
	// DemoteExpand adds: its expansion weight): a caption that says "male
	// vocals" falls below one that says nothing of a voice.
	Demote float64
	// DemoteExpand expands the negated words through the word vectors, as
	// Expand does the query's but for known words too ("vocals" also
	// demotes "singer" and "singing").
	DemoteExpand bool
}

// NegationPool is how many fused candidates a query with negated words
// ranks before demoting (here and in the Weaviate backend): demotion only
// reorders, so a pool a little deeper than any page is enough.
const NegationPool = 200

// PhraseWeight is the phrases' weight relative to a query word's: Metzler
// and Croft's published 0.10 against 0.85 for single terms (SIGIR 2005),
// about 0.12, taken as it is rather than fitted: cross-validation over the
// 15 dev queries held out better at this one weight than when it chose
// among 0.1, 0.25 and 0.5 (BENCHMARKS.md, music search quality).
const PhraseWeight = 0.1

// DefaultRankParams returns the engine's default parameters.
func DefaultRankParams() RankParams {
	return RankParams{
		LexWeight: 0.9,
		Expand:    ExpandParams{Neighbours: 10, MinSim: 0.5, Weight: 0.7, MinDocs: 3, KnownScale: 0},
		Phrase:    PhraseWeight,
		Negation:  NegationParams{Drop: true, Demote: 1, DemoteExpand: true},
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
	query = ClipQuery(query)
	negated := ""
	if p.Negation.Drop {
		query, negated = DropNegation(query)
	}
	switch mode {
	case Lexical:
		return e.lex.Top(e.searchTerms(query, p), k, filter), nil
	case Semantic:
		qv, err := e.embedQuery(ctx, query)
		if err != nil {
			return nil, err
		}
		return e.vec.Search(qv, k, filter), nil
	case Hybrid:
		demote := negated != "" && p.Negation.Demote > 0
		var aspects []string
		if p.Coord > 0 {
			aspects = distinctTerms(query)
		}
		if !demote && len(aspects) < 2 {
			return e.hybrid(ctx, p, query, k, filter)
		}
		hits, err := e.hybrid(ctx, p, query, max(k, NegationPool), filter)
		if err != nil {
			return nil, err
		}
		if len(aspects) >= 2 {
			hits = e.coordinate(hits, aspects, p.Coord)
		}
		if demote {
			hits = e.demote(hits, query, negated, p, len(hits))
		}
		return hits[:min(k, len(hits))], nil
	}
	return nil, fmt.Errorf("index: unknown mode %v", mode)
}

// searchTerms is the weighted BM25 query with p: lexicalTerms plus the
// query's phrases.
func (e *Engine) searchTerms(query string, p RankParams) map[string]float64 {
	return withPhrases(e.lexicalTerms(query, p.Expand), query, p.Phrase)
}

// withPhrases adds to terms the bigram of each two consecutive terms of
// query (after stopwords are dropped, as the index does), each weighted w.
func withPhrases(terms map[string]float64, query string, w float64) map[string]float64 {
	if w <= 0 {
		return terms
	}
	qt := Terms(query)
	for i := 1; i < len(qt); i++ {
		if b := bigram(qt[i-1], qt[i]); terms[b] < w {
			terms[b] = w
		}
	}
	return terms
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
	terms := e.searchTerms(query, p)
	vq := e.vectorQuery(qv, query, terms, p)
	var lex []Hit
	if filter == nil && !p.Feedback.on() {
		// The common case, fused over slots: the same hits as below.
		slots, done := e.lex.topSlots(terms, max(hybridLexPool, k), nil)
		hits, ok := e.vec.hybridExact(vq, slots, max(hybridVecPool, k), p.LexWeight, k)
		if !ok {
			lex = make([]Hit, len(slots))
			for i, h := range slots {
				lex[i] = h.Hit
			}
		}
		done()
		if ok {
			return hits, nil
		}
	} else {
		lex = e.lex.top(terms, max(hybridLexPool, k), filter)
	}
	vec := e.vec.pool(vq, max(hybridVecPool, k), filter)
	if p.Feedback.on() {
		lex = e.feedbackLex(terms, lex, vec, p, max(hybridLexPool, k), filter)
	}
	return fuse(lex, vec, p.LexWeight, k), nil
}

// vectorQuery is the vector side's query: qv, moved towards the expansion
// terms when p.VecExpand asks for it.
func (e *Engine) vectorQuery(qv []float32, query string, terms map[string]float64, p RankParams) []float32 {
	src, ok := e.emb.(embedding.WordVectorSource)
	if !ok || p.VecExpand <= 0 || p.Expand.Neighbours <= 0 {
		return qv
	}
	return e.exp.get(src, e.lex, p.Expand.MinDocs).expandVector(qv, query, terms, p.VecExpand)
}

// feedbackLex is the lexical side searched again with the feedback terms of
// the first pass's fused ranking of lex and vec; lex when feedback adds
// nothing.
func (e *Engine) feedbackLex(terms map[string]float64, lex, vec []Hit, p RankParams, pool int, filter func(id string) bool) []Hit {
	first := fuse(lex, vec, p.LexWeight, p.Feedback.Docs)
	more := e.lex.feedbackTerms(terms, first, p.Feedback)
	if len(more) == len(terms) {
		return lex
	}
	return e.lex.top(more, pool, filter)
}

// fuse is the hybrid's fusion of each side's candidates, best first.
func fuse(lex, vec []Hit, lexWeight float64, k int) []Hit {
	fused := make(map[string]float64, len(lex)+len(vec))
	addNormalised(fused, lex, lexWeight)
	addNormalised(fused, vec, 1-lexWeight)
	return topHits(fused, k, nil)
}

// demote is [Demote] over the engine's index, with the negated words
// expanded through the word vectors when p asks for it.
func (e *Engine) demote(hits []Hit, kept, negated string, p RankParams, k int) []Hit {
	var terms map[string]float64
	if p.Negation.DemoteExpand {
		x := p.Expand
		x.KnownScale = 1
		terms = e.lexicalTerms(negated, x)
	} else {
		terms = queryTerms(negated)
	}
	holders := func(t string) iter.Seq[string] { return maps.Keys(e.lex.Scores(map[string]float64{t: 1})) }
	return Demote(hits, terms, e.lexicalTerms(kept, p.Expand), holders, p.Negation.Demote, k)
}

// Demote lowers each hit's score by by × the weight of the heaviest of the
// negated terms its text holds (at most 1: 1 for a word of the query, less
// for an expansion) and returns the best k. holders(t) yields the ids whose
// text holds term t (ids not among hits are ignored): the engine reads its
// index, the Weaviate backend asks Weaviate. A term of kept, what the query
// asks for, is never demoted: the word vectors put "piano" near "vocals",
// and "piano without vocals" wants the piano.
func Demote(hits []Hit, negated, kept map[string]float64, holders func(term string) iter.Seq[string], by float64, k int) []Hit {
	scores := make(map[string]float64, len(hits))
	for _, h := range hits {
		scores[h.ID] = h.Score
	}
	held := make(map[string]float64, len(hits))
	for t, w := range negated {
		if _, ok := kept[t]; ok {
			continue
		}
		for id := range holders(t) {
			if _, ok := scores[id]; ok {
				held[id] = max(held[id], min(w, 1))
			}
		}
	}
	for id, w := range held {
		scores[id] -= by * w
	}
	return topHits(scores, k, nil)
}

// distinctTerms are query's terms, each once.
func distinctTerms(query string) []string {
	var out []string
	for _, t := range Terms(query) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// coordinate adds w × the share of aspects each hit's text holds to its
// score and reorders the hits.
func (e *Engine) coordinate(hits []Hit, aspects []string, w float64) []Hit {
	held := make(map[string]int, len(hits))
	for _, a := range aspects {
		for id := range e.lex.Scores(map[string]float64{a: 1}) {
			held[id]++
		}
	}
	scores := make(map[string]float64, len(hits))
	for _, h := range hits {
		scores[h.ID] = h.Score + w*float64(held[h.ID])/float64(len(aspects))
	}
	return topHits(scores, len(hits), nil)
}
