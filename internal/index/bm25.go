package index

import (
	"math"
	"sync"
)

// Field weights for BM25F: a term in a title or artist name says more about
// a track than one in a long interpretation.
const (
	weightTitle          = 2
	weightArtist         = 2
	weightAlbum          = 1
	weightInterpretation = 1
	weightLyrics         = 1
)

// BM25 parameters (Robertson's usual values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Fields are the text fields of an indexed track.
type Fields struct {
	Title, Artist, Album, Interpretation, Lyrics string
}

// weightedTerms analyses each field and merges their term frequencies with
// the field weights; it returns the frequencies and the weighted length.
func (f Fields) weightedTerms() (map[string]float32, float32) {
	tf := map[string]float32{}
	var length float32
	for _, p := range []struct {
		text string
		w    float32
	}{
		{f.Title, weightTitle}, {f.Artist, weightArtist}, {f.Album, weightAlbum},
		{f.Interpretation, weightInterpretation}, {f.Lyrics, weightLyrics},
	} {
		if len(p.text) > maxFieldBytes {
			p.text = p.text[:maxFieldBytes]
		}
		for _, t := range Terms(p.text) {
			tf[t] += p.w
			length += p.w
		}
	}
	return tf, length
}

// maxFieldBytes bounds the text indexed per field.
const maxFieldBytes = 64 << 10

type posting struct {
	doc int32
	tf  float32
}

// BM25 is an in-memory BM25F index over [Fields], keyed by id. It is safe for
// concurrent use.
type BM25 struct {
	mu       sync.RWMutex
	postings map[string][]posting
	ids      []string         // slot → id ("" for a free slot)
	slot     map[string]int32 // id → slot
	terms    [][]string       // slot → its distinct terms, for removal
	length   []float32        // slot → weighted length
	free     []int32
	total    float64 // sum of lengths
}

// NewBM25 returns an empty index.
func NewBM25() *BM25 {
	return &BM25{postings: map[string][]posting{}, slot: map[string]int32{}}
}

// Len is the number of documents.
func (x *BM25) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.slot)
}

// Add indexes (or re-indexes) a document.
func (x *BM25) Add(id string, f Fields) {
	tf, length := f.weightedTerms()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.remove(id)
	var s int32
	if n := len(x.free); n > 0 {
		s, x.free = x.free[n-1], x.free[:n-1]
	} else {
		s = int32(len(x.ids))
		x.ids = append(x.ids, "")
		x.terms = append(x.terms, nil)
		x.length = append(x.length, 0)
	}
	x.ids[s], x.slot[id], x.length[s] = id, s, length
	terms := make([]string, 0, len(tf))
	for t, n := range tf {
		x.postings[t] = append(x.postings[t], posting{doc: s, tf: n})
		terms = append(terms, t)
	}
	x.terms[s] = terms
	x.total += float64(length)
}

// Remove deletes a document and reports whether it was there.
func (x *BM25) Remove(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.remove(id)
}

func (x *BM25) remove(id string) bool {
	s, ok := x.slot[id]
	if !ok {
		return false
	}
	for _, t := range x.terms[s] {
		ps := x.postings[t]
		for i, p := range ps {
			if p.doc == s {
				ps[i] = ps[len(ps)-1]
				ps = ps[:len(ps)-1]
				break
			}
		}
		if len(ps) == 0 {
			delete(x.postings, t)
		} else {
			x.postings[t] = ps
		}
	}
	x.total -= float64(x.length[s])
	x.ids[s], x.terms[s], x.length[s] = "", nil, 0
	delete(x.slot, id)
	x.free = append(x.free, s)
	return true
}

// Scores returns the BM25 score of every document that matches at least one
// query term, keyed by id. weights gives each query term's weight (1 for a
// plain query; expansion terms get less).
func (x *BM25) Scores(weights map[string]float64) map[string]float64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := float64(len(x.slot))
	if n == 0 {
		return map[string]float64{}
	}
	avg := x.total / n
	acc := map[int32]float64{}
	for t, w := range weights {
		ps := x.postings[t]
		if len(ps) == 0 || w == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(x.length[p.doc])/avg)
			acc[p.doc] += w * idf * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	out := make(map[string]float64, len(acc))
	for s, v := range acc {
		out[x.ids[s]] = v
	}
	return out
}
