package index

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
func (f Fields) weightedTerms(analyze func(string) []string) (map[string]float32, float32) {
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
		terms := analyze(p.text)
		for i, t := range terms {
			tf[t] += p.w
			length += p.w
			if i > 0 {
				// Bigrams are evidence of the words' phrase, not more
				// words: they do not count in the length.
				tf[bigram(terms[i-1], t)] += p.w
			}
		}
	}
	return tf, length
}

// bigram is the index term of two terms that follow each other in a field
// (stopwords between them do not count: "jazz with saxophone" holds
// "jazz saxophone"). Its space keeps it apart from every word's term.
func bigram(a, b string) string { return a + " " + b }

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
	terms    [][]string       // slot → its distinct terms, for removal and feedback; see laid
	tfs      [][]float32      // slot → the weighted frequency of each of terms
	length   []float32        // slot → weighted length
	free     []int32
	total    float64 // sum of lengths
	analyze  func(string) []string
	scratch  sync.Pool // *bm25Scratch
	hits     sync.Pool // *[]slotHit, topSlots's candidates

	// laid says whether terms and tfs are kept. They are laid out from the
	// postings on first need (a replacement, a removal, or feedback), not
	// while documents are added or a snapshot decoded: a bulk load and a
	// cold search need neither, and per document they cost more than its
	// postings (16 bytes a term, against 8 a posting). Once laid out, they
	// are kept up to date by every write (slotTerms).
	laid      atomic.Bool
	termsOnce sync.Once
}

// NewBM25 returns an empty index.
func NewBM25() *BM25 { return newBM25With(Terms) }

// newBM25With is an empty index whose fields are analysed by analyze.
func newBM25With(analyze func(string) []string) *BM25 {
	return &BM25{postings: map[string][]posting{}, slot: map[string]int32{}, analyze: analyze}
}

// Len is the number of documents.
func (x *BM25) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.slot)
}

// Add indexes (or re-indexes) a document.
func (x *BM25) Add(id string, f Fields) {
	tf, length := f.weightedTerms(x.analyze)
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.slot[id]; ok {
		x.remove(id) // lays the terms out: removal needs them
	}
	laid := x.laid.Load()
	var s int32
	if n := len(x.free); n > 0 {
		s, x.free = x.free[n-1], x.free[:n-1]
	} else {
		s = int32(len(x.ids))
		x.ids = append(x.ids, "")
		x.length = append(x.length, 0)
		if laid {
			x.terms = append(x.terms, nil)
			x.tfs = append(x.tfs, nil)
		}
	}
	x.ids[s], x.slot[id], x.length[s] = id, s, length
	var terms []string
	var tfs []float32
	if laid {
		terms, tfs = make([]string, 0, len(tf)), make([]float32, 0, len(tf))
	}
	for t, n := range tf {
		// The analyser's terms may be substrings of the document's text,
		// and assigning to a map replaces a string key with the one given:
		// a copy keeps the index from holding every document's text.
		t = strings.Clone(t)
		x.postings[t] = append(x.postings[t], posting{doc: s, tf: n})
		if laid {
			terms = append(terms, t)
			tfs = append(tfs, n)
		}
	}
	if laid {
		x.terms[s], x.tfs[s] = terms, tfs
	}
	x.total += float64(length)
}

// Reserve makes room for n more documents' slots, so that a bulk load of a
// known size grows its per-slot arrays once instead of by doubling.
func (x *BM25) Reserve(n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if n <= 0 {
		return
	}
	x.ids = slices.Grow(x.ids, n)
	x.length = slices.Grow(x.length, n)
	if len(x.slot) == 0 {
		x.slot = make(map[string]int32, n)
	}
}

// Remove deletes a document and reports whether it was there.
func (x *BM25) Remove(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.remove(id)
}

func (x *BM25) remove(id string) bool {
	x.slotTerms()
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
	x.ids[s], x.terms[s], x.tfs[s], x.length[s] = "", nil, nil, 0
	delete(x.slot, id)
	x.free = append(x.free, s)
	return true
}

// slotTerms lays out terms and tfs if they are still to be (see laid).
// The caller holds mu, for reading or writing; concurrent readers wait for
// the one that lays them out. Within a slot the terms come in no particular
// order, as Add leaves them; they are the postings' keys, not copies.
func (x *BM25) slotTerms() {
	if x.laid.Load() {
		return
	}
	x.termsOnce.Do(func() {
		defer x.laid.Store(true)
		perSlot := make([]int, len(x.ids))
		total := 0
		for _, ps := range x.postings {
			for _, p := range ps {
				perSlot[p.doc]++
			}
			total += len(ps)
		}
		// One array of each, cut into capped slices (an append copies).
		all, allTfs := make([]string, total), make([]float32, total)
		next := make([]int, len(x.ids)) // where slot s's next term goes
		at := 0
		for s, n := range perSlot {
			next[s] = at
			at += n
		}
		for t, ps := range x.postings {
			for _, p := range ps {
				all[next[p.doc]], allTfs[next[p.doc]] = t, p.tf
				next[p.doc]++
			}
		}
		x.terms, x.tfs = make([][]string, len(x.ids)), make([][]float32, len(x.ids))
		start := 0
		for s, end := range next {
			if end > start {
				x.terms[s], x.tfs[s] = all[start:end:end], allTfs[start:end:end]
			}
			start = end
		}
	})
}

// Scores returns the BM25 score of every document that matches at least one
// query term, keyed by id. weights gives each query term's weight (1 for a
// plain query; expansion terms get less).
func (x *BM25) Scores(weights map[string]float64) map[string]float64 {
	return x.scoresWith(weights, bm25K1, bm25B)
}

// scoresWith is [BM25.Scores] with the term-frequency saturation k1 and the
// length normalisation b given.
func (x *BM25) scoresWith(weights map[string]float64, k1, b float64) map[string]float64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	sc := x.accumulate(weights, k1, b)
	defer x.release(sc)
	out := make(map[string]float64, len(sc.touched))
	for _, s := range sc.touched {
		out[x.ids[s]] = sc.acc[s]
	}
	return out
}

// Top returns the k best-scored documents of [BM25.Scores] that pass filter,
// best first, ties broken by id: topHits(x.Scores(weights), k, filter)
// without a map per query.
func (x *BM25) Top(weights map[string]float64, k int, filter func(id string) bool) []Hit {
	hits := x.top(weights, k, filter)
	slices.SortFunc(hits, byScore)
	return hits
}

// top is Top in no particular order.
func (x *BM25) top(weights map[string]float64, k int, filter func(id string) bool) []Hit {
	x.mu.RLock()
	defer x.mu.RUnlock()
	sc := x.accumulate(weights, bm25K1, bm25B)
	defer x.release(sc)
	hits := make([]Hit, 0, len(sc.touched))
	for _, s := range sc.touched {
		if id := x.ids[s]; filter == nil || filter(id) {
			hits = append(hits, Hit{id, sc.acc[s]})
		}
	}
	return selectSet(hits, k, byScore)
}

// topSlots is top with each hit's slot, for a fusion over slots. The hits
// are in a buffer reused across queries: the caller hands it back with
// done once it has read them (a query matching most of the index would
// otherwise allocate a hit per matching document).
func (x *BM25) topSlots(weights map[string]float64, k int, filter func(id string) bool) (top []slotHit, done func()) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	sc := x.accumulate(weights, bm25K1, bm25B)
	defer x.release(sc)
	buf, _ := x.hits.Get().(*[]slotHit)
	if buf == nil {
		buf = new([]slotHit)
	}
	hits := slices.Grow((*buf)[:0], len(sc.touched))
	for _, s := range sc.touched {
		if id := x.ids[s]; filter == nil || filter(id) {
			hits = append(hits, slotHit{Hit{id, sc.acc[s]}, s})
		}
	}
	*buf = hits[:0]
	return selectSet(hits, k, bySlotHitScore), func() {
		clear(hits) // the ids, for the collector
		x.hits.Put(buf)
	}
}

// bm25Scratch is one query's score per slot and the slots scored, reused
// across queries (a map per query was a tenth of a search's CPU).
type bm25Scratch struct {
	acc     []float64 // slot → score; zero outside touched
	seen    []bool    // slot → in touched
	touched []int32
	terms   []string
}

// accumulate scores the documents matching weights into a scratch from the
// pool; the caller holds x.mu for reading and releases the scratch. Terms
// are summed in sorted order, so a document's score does not depend on map
// iteration order.
func (x *BM25) accumulate(weights map[string]float64, k1, b float64) *bm25Scratch {
	sc, _ := x.scratch.Get().(*bm25Scratch)
	if sc == nil {
		sc = &bm25Scratch{}
	}
	if len(sc.acc) < len(x.ids) {
		sc.acc, sc.seen = make([]float64, len(x.ids)), make([]bool, len(x.ids))
	}
	n := float64(len(x.slot))
	if n == 0 {
		return sc
	}
	sc.terms = sc.terms[:0]
	for t := range weights {
		sc.terms = append(sc.terms, t)
	}
	slices.Sort(sc.terms)
	avg := x.total / n
	for _, t := range sc.terms {
		w := weights[t]
		ps := x.postings[t]
		if len(ps) == 0 || w == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := k1 * (1 - b + b*float64(x.length[p.doc])/avg)
			v := w * idf * tf * (k1 + 1) / (tf + norm)
			if !sc.seen[p.doc] {
				sc.seen[p.doc] = true
				sc.touched = append(sc.touched, p.doc)
			}
			sc.acc[p.doc] += v
		}
	}
	return sc
}

// release clears a scratch's scores and returns it to the pool.
func (x *BM25) release(sc *bm25Scratch) {
	for _, s := range sc.touched {
		sc.acc[s], sc.seen[s] = 0, false
	}
	sc.touched = sc.touched[:0]
	x.scratch.Put(sc)
}

// has reports whether any document holds term.
func (x *BM25) has(term string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.postings[term]) > 0
}
