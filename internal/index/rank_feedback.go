package index

import (
	"math"
	"slices"
	"strings"
)

// FeedbackParams configures pseudo-relevance feedback (the relevance model
// of Lavrenko and Croft, interpolated with the query as in RM3): the first
// pass's best documents are taken as relevant, the terms they share, weighed
// by how much of each document they are and how rare they are in the index,
// join the lexical query, and the hybrid is ranked again. A caption that
// says "sorrowful cello" is found for "mournful strings" when the captions
// the query finds also say "cello".
type FeedbackParams struct {
	// Docs is how many of the first pass's best documents are read; 0
	// turns feedback off.
	Docs int
	// Terms is how many terms feedback adds at most.
	Terms int
	// Weight is the query weight of the best feedback term (a query word's
	// own weight is 1); the others get Weight times their share of its
	// score.
	Weight float64
}

// on reports whether p asks for feedback.
func (p FeedbackParams) on() bool { return p.Docs > 0 && p.Terms > 0 && p.Weight > 0 }

// feedbackMinDocs is how many documents a feedback term must occur in:
// rarer terms are mostly names and typos, whose idf would outweigh every
// real term.
const feedbackMinDocs = 3

// feedbackTerms returns query plus up to p.Terms terms of the documents
// first (best first, scored), each weighted p.Weight·score/best score,
// where a term's score is Σ_d w_d·tf(t,d)/len(d)·idf(t) with w_d the
// document's first-pass score. Terms the query already has keep their
// weight. query is not modified.
func (x *BM25) feedbackTerms(query map[string]float64, first []Hit, p FeedbackParams) map[string]float64 {
	if !p.on() || len(first) == 0 {
		return query
	}
	x.mu.RLock()
	x.slotTerms()
	n := float64(len(x.slot))
	scores := map[string]float64{}
	for _, h := range first[:min(p.Docs, len(first))] {
		s, ok := x.slot[h.ID]
		if !ok || x.length[s] <= 0 || h.Score <= 0 {
			continue
		}
		dw := h.Score / float64(x.length[s])
		for i, t := range x.terms[s] {
			if _, in := query[t]; in {
				continue
			}
			df := len(x.postings[t])
			if df < feedbackMinDocs {
				continue
			}
			idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
			scores[t] += dw * float64(x.tfs[s][i]) * idf
		}
	}
	x.mu.RUnlock()
	if len(scores) == 0 {
		return query
	}
	type scored struct {
		t string
		s float64
	}
	ranked := make([]scored, 0, len(scores))
	for t, s := range scores {
		ranked = append(ranked, scored{t, s})
	}
	// Ties by term, so the expansion does not depend on map order.
	slices.SortFunc(ranked, func(a, b scored) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return strings.Compare(a.t, b.t)
	})
	ranked = ranked[:min(p.Terms, len(ranked))]
	out := make(map[string]float64, len(query)+len(ranked))
	for t, w := range query {
		out[t] = w
	}
	top := ranked[0].s
	for _, r := range ranked {
		out[r.t] = p.Weight * r.s / top
	}
	return out
}
