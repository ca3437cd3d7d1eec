package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/textclip"
)

// Document is an indexed track: its id (the ISRC), its text fields and,
// optionally, its vector. A nil Vector is computed by the engine's embedder
// from [EmbeddingText].
type Document struct {
	ID string
	Fields
	Vector []float32
}

// EmbeddingText is the text a document's vector is computed from: the
// interpretation and lyrics, then title, artist and album. Callers that embed
// documents themselves (to store the vectors) must use it so that stored and
// computed vectors agree.
func EmbeddingText(f Fields) string {
	var b strings.Builder
	for _, s := range []string{f.Interpretation, f.Lyrics, f.Title, f.Artist, f.Album} {
		if s = strings.TrimSpace(s); s != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// Mode selects how [Engine.SearchMode] ranks.
type Mode int

const (
	// Hybrid fuses lexical and vector scores; the default.
	Hybrid Mode = iota
	// Lexical ranks by BM25 alone.
	Lexical
	// Semantic ranks by vector similarity alone.
	Semantic
)

func (m Mode) String() string {
	switch m {
	case Hybrid:
		return "hybrid"
	case Lexical:
		return "lexical"
	case Semantic:
		return "semantic"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// MaxQueryBytes bounds a query's text; the rest is ignored.
const MaxQueryBytes = 4096

// ClipQuery is query cut to MaxQueryBytes on a character boundary: every
// reader of a query (the engine, the Weaviate backend, the music pack)
// reads the same words.
func ClipQuery(query string) string { return textclip.Prefix(query, MaxQueryBytes) }

// Engine answers text queries over indexed tracks by fusing BM25 and vector
// similarity. It is safe for concurrent use.
type Engine struct {
	emb embedding.Embedder
	lex *BM25
	vec *VectorIndex

	rankMu sync.RWMutex
	rank   RankParams     // see rank.go
	exp    expansionCache // query expansion's candidate terms (expand.go)
}

// NewEngine returns an empty engine that embeds documents and queries with emb.
func NewEngine(emb embedding.Embedder) *Engine {
	return &Engine{emb: emb, lex: NewBM25(), vec: NewVectorIndex(emb.Dimensions()), rank: DefaultRankParams()}
}

// Embedder is the engine's embedder.
func (e *Engine) Embedder() embedding.Embedder { return e.emb }

// Len is the number of documents.
func (e *Engine) Len() int { return e.vec.Len() }

// Has reports whether a document is indexed.
func (e *Engine) Has(id string) bool { return e.vec.Has(id) }

// Reserve makes room for n more documents, for a caller that knows how
// many it is about to add (a load from the store): the engine's per-document
// arrays are then allocated once, not regrown and copied as they fill.
func (e *Engine) Reserve(n int) {
	e.vec.Reserve(n)
	e.lex.Reserve(n)
}

// embedBatch is how many documents Add embeds per call to the embedder.
const embedBatch = 256

// Add indexes documents, replacing any with the same id. Documents without a
// vector are embedded in batches; a vector of the wrong length is an error
// and nothing of that batch is added.
func (e *Engine) Add(ctx context.Context, docs []Document) error {
	for start := 0; start < len(docs); start += embedBatch {
		batch := docs[start:min(start+embedBatch, len(docs))]
		vecs := make([][]float32, len(batch))
		var texts []string
		var missing []int
		for i, d := range batch {
			if d.ID == "" {
				return errors.New("index: document without an id")
			}
			if d.Vector == nil {
				texts = append(texts, EmbeddingText(d.Fields))
				missing = append(missing, i)
			} else {
				vecs[i] = d.Vector
			}
		}
		if len(texts) > 0 {
			got, err := e.emb.Embed(ctx, texts)
			if err != nil {
				return fmt.Errorf("index: embed: %w", err)
			}
			if len(got) != len(texts) {
				return fmt.Errorf("index: embedder returned %d vectors for %d texts", len(got), len(texts))
			}
			for j, i := range missing {
				vecs[i] = got[j]
			}
		}
		ids := make([]string, len(batch))
		for i, d := range batch {
			ids[i] = d.ID
		}
		if err := e.vec.AddBatch(ids, vecs); err != nil {
			return err
		}
		for _, d := range batch {
			e.lex.Add(d.ID, d.Fields)
		}
		e.exp.invalidate()
	}
	return nil
}

// Remove deletes a document and reports whether it was there.
func (e *Engine) Remove(id string) bool {
	ok := e.vec.Remove(id)
	e.lex.Remove(id)
	e.exp.invalidate()
	return ok
}

// Search returns up to k documents for the query, best first, ranked by the
// hybrid of BM25 and vector similarity. filter, when not nil, keeps only the
// ids it returns true for.
func (e *Engine) Search(ctx context.Context, query string, k int, filter func(id string) bool) ([]Hit, error) {
	return e.SearchMode(ctx, Hybrid, query, k, filter)
}

// SearchMode is [Engine.Search] with a chosen ranking, for evaluation and for
// callers that want lexical-only or vector-only results.
func (e *Engine) SearchMode(ctx context.Context, mode Mode, query string, k int, filter func(id string) bool) ([]Hit, error) {
	return e.search(ctx, e.RankParams(), mode, query, k, filter)
}

func (e *Engine) embedQuery(ctx context.Context, query string) ([]float32, error) {
	vs, err := e.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("index: embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("index: embedder returned %d vectors for 1 text", len(vs))
	}
	return vs[0], nil
}

// queryTerms weights each query term by its number of occurrences.
func queryTerms(query string) map[string]float64 {
	weights := map[string]float64{}
	for _, t := range Terms(query) {
		weights[t]++
	}
	return weights
}

// addNormalised adds weight·(score−min)/(max−min) of each hit to acc.
func addNormalised(acc map[string]float64, hits []Hit, weight float64) {
	if len(hits) == 0 {
		return
	}
	// The hits may come in any order.
	hi, lo := hits[0].Score, hits[0].Score
	for _, h := range hits[1:] {
		hi, lo = max(hi, h.Score), min(lo, h.Score)
	}
	span := hi - lo
	for _, h := range hits {
		v := 1.0
		if span > 0 {
			v = (h.Score - lo) / span
		}
		acc[h.ID] += weight * v
	}
}

// topHits returns the k best-scored ids that pass filter, best first, ties
// broken by id.
func topHits(scores map[string]float64, k int, filter func(string) bool) []Hit {
	hits := make([]Hit, 0, len(scores))
	for id, s := range scores {
		if filter == nil || filter(id) {
			hits = append(hits, Hit{id, s})
		}
	}
	return selectTop(hits, k, byScore)
}
