package index

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/embedding"
)

// ExpandParams configures query expansion through word vectors: each query
// word brings in the index terms whose word vectors are nearest to its own
// ("joyful" → "happy", "cheerful"; "singer" → "vocalist"), so that BM25 also
// scores the captions that say the same thing in other words. Only terms the
// index holds are candidates, so every expansion term can match something.
type ExpandParams struct {
	// Neighbours is how many related terms each query word brings at most;
	// 0 turns expansion off.
	Neighbours int
	// MinSim is the cosine a related term's vector needs with the query
	// word's.
	MinSim float64
	// Weight scales an expansion term's query weight, which is Weight·cosine
	// (a query word's own weight is 1).
	Weight float64
	// MinDocs is how many documents a term must occur in to be a candidate;
	// rarer terms are mostly typos and names.
	MinDocs int
	// KnownScale multiplies the expansion weight of a query word the index
	// itself holds (in MinDocs documents or more). Word-vector neighbours of
	// instruments and genres are their siblings ("saxophone" → "clarinet"),
	// which dilute a query the index can already answer; words the index
	// lacks ("heartbroken", "joyful") need their neighbours most.
	KnownScale float64
}

// expandRefresh bounds how often the candidate terms are rebuilt while the
// index changes: an expansion a second stale is as good as a fresh one.
const expandRefresh = time.Second

// expansionCache holds an engine's expansion candidates (the index's terms
// with word vectors), rebuilt lazily after the index changed.
type expansionCache struct {
	mu      sync.Mutex
	changed bool // the index changed since built
	built   time.Time
	minDocs int
	cur     *expansionTerms
}

// expansionTerms are the candidate terms and their unit vectors (the vector
// of the most frequent vocabulary word with that stem).
type expansionTerms struct {
	terms    []string
	vecs     []float32 // len(terms) × dims
	dims     int
	docs     map[string]int      // term → document frequency
	rows     map[string]int      // term → its row in terms and vecs
	antonyms map[string][]string // stem → its opposites, never added

	// near caches each query word's nearest terms: a chat asks about the
	// same words again and again, and the scan of every candidate term (and,
	// for a word the vocabulary lacks, of the vocabulary) was a tenth of a
	// search, done twice when the tool also explains the match.
	nearMu sync.Mutex
	near   map[nearKey][]neighbour
}

// nearKey is what a query word's nearest terms depend on, besides the
// candidate terms themselves (a new expansionTerms starts a new cache).
type nearKey struct {
	word   string
	n      int
	minSim float64
}

// maxNearCached bounds the cache; when full it starts again.
const maxNearCached = 4096

// invalidate notes that the index changed.
func (c *expansionCache) invalidate() {
	c.mu.Lock()
	c.changed = true
	c.mu.Unlock()
}

// get returns the candidates, rebuilding them when the index has changed
// (at most once per expandRefresh) or minDocs differs.
func (c *expansionCache) get(src embedding.WordVectorSource, lex *BM25, minDocs int) *expansionTerms {
	c.mu.Lock()
	defer c.mu.Unlock()
	stale := c.changed && time.Since(c.built) >= expandRefresh
	if c.cur == nil || stale || c.minDocs != minDocs {
		c.cur = buildExpansionTerms(src, lex, minDocs)
		c.built, c.changed, c.minDocs = time.Now(), false, minDocs
	}
	return c.cur
}

func buildExpansionTerms(src embedding.WordVectorSource, lex *BM25, minDocs int) *expansionTerms {
	out := &expansionTerms{docs: map[string]int{}, rows: map[string]int{}, antonyms: antonyms()}
	seen := map[string]bool{}
	src.EachWord(func(w string, v []float32) bool {
		if isStopword(w) {
			return true
		}
		t := Stem(w)
		if seen[t] {
			return true
		}
		seen[t] = true
		df := lex.docFreq(t)
		if df < max(minDocs, 1) {
			return true
		}
		out.docs[t] = df
		out.rows[t] = len(out.terms)
		out.dims = len(v)
		out.terms = append(out.terms, t)
		if cap(out.vecs)-len(out.vecs) < len(v) {
			// Doubling: append grows a large slice by a quarter, which
			// for the demo's 2,000 rows allocated and copied 5 MB for 0.8.
			out.vecs = slices.Grow(out.vecs, max(len(out.vecs), 256*len(v)))
		}
		out.vecs = append(out.vecs, v...)
		return true
	})
	return out
}

// expandQuery returns the weighted query terms: each query term with its
// count, plus each query word's nearest index terms weighted
// p.Weight·cosine (the largest when several words bring the same term; a
// query term keeps its own weight).
func (x *expansionTerms) expandQuery(src embedding.WordVectorSource, query string, p ExpandParams) map[string]float64 {
	weights := queryTerms(query)
	if x == nil || p.Neighbours <= 0 || p.Weight <= 0 || len(x.terms) == 0 {
		return weights
	}
	added := map[string]float64{}
	done := map[string]bool{}
	for _, w := range embedding.Words(query) {
		if isStopword(w) || done[w] {
			continue
		}
		done[w] = true
		own := Stem(w)
		scale := p.Weight
		if x.docs[own] > 0 {
			scale *= p.KnownScale
		}
		if scale <= 0 {
			continue
		}
		for _, n := range x.nearestWord(src, w, p.Neighbours+1, p.MinSim) {
			t := x.terms[n.i]
			if t == own || slices.Contains(x.antonyms[own], t) {
				continue
			}
			if wt := scale * n.sim; wt > added[t] {
				added[t] = wt
			}
		}
	}
	for t, wt := range added {
		if _, ok := weights[t]; !ok {
			weights[t] = wt
		}
	}
	return weights
}

// nearestWord is nearest for the word's vector (wordVector), cached; nil
// for a word without one.
func (x *expansionTerms) nearestWord(src embedding.WordVectorSource, w string, n int, minSim float64) []neighbour {
	key := nearKey{w, n, minSim}
	x.nearMu.Lock()
	got, ok := x.near[key]
	x.nearMu.Unlock()
	if ok {
		return got
	}
	if qv := wordVector(src, w); len(qv) == x.dims {
		got = x.nearest(qv, n, minSim)
	}
	x.nearMu.Lock()
	if x.near == nil || len(x.near) >= maxNearCached {
		x.near = map[nearKey][]neighbour{}
	}
	x.near[key] = got
	x.nearMu.Unlock()
	return got
}

// wordVector returns w's vector, or for a word the vocabulary lacks the
// vector of a form of it that it has: its stem ("lullabies" → "lullaby"),
// else the most frequent word sharing its longest prefix of at least
// len(w)−3 letters and 5 ("melancholic" → "melancholy", "groovy" → "groove").
func wordVector(src embedding.WordVectorSource, w string) []float32 {
	if v := src.WordVector(w); v != nil {
		return v
	}
	if v := src.WordVector(Stem(w)); v != nil {
		return v
	}
	need := max(len(w)-3, 5)
	if len(w) < need {
		return nil
	}
	var best []float32
	bestLen := 0
	src.EachWord(func(c string, v []float32) bool {
		n := commonPrefix(c, w)
		if n >= need && n > bestLen {
			best, bestLen = v, n
		}
		return true
	})
	return best
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

type neighbour struct {
	i   int
	sim float64
}

// nearest returns up to n rows with cosine ≥ minSim to v, best first.
func (x *expansionTerms) nearest(v []float32, n int, minSim float64) []neighbour {
	var best []neighbour // sorted descending, at most n
	for i := range x.terms {
		row := x.vecs[i*x.dims : (i+1)*x.dims]
		var s float32
		for j, a := range v {
			s += a * row[j]
		}
		sim := float64(s)
		if sim < minSim || (len(best) == n && sim <= best[n-1].sim) || math.IsNaN(sim) {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, sim, func(a neighbour, s float64) int {
			if a.sim > s {
				return -1
			}
			return 1
		})
		best = slices.Insert(best, at, neighbour{i, sim})
		if len(best) > n {
			best = best[:n]
		}
	}
	return best
}

// expandVector returns the query vector qv moved towards the word vectors
// of the expansion terms (those of terms the query itself lacks), weighted
// as in terms: unit(qv) + w·unit(Σ weight·vector), normalised. A query
// whose words the captions never use ("heartbroken") then also finds, on
// the vector side, the captions near the words it was expanded to. qv
// itself when nothing was added.
func (x *expansionTerms) expandVector(qv []float32, query string, terms map[string]float64, w float64) []float32 {
	if x == nil || w <= 0 || len(qv) != x.dims {
		return qv
	}
	own := queryTerms(query)
	sum := make([]float32, x.dims)
	added := false
	for t, wt := range terms {
		r, ok := x.rows[t]
		if _, in := own[t]; in || !ok {
			continue
		}
		added = true
		for j, v := range x.vecs[r*x.dims : (r+1)*x.dims] {
			sum[j] += float32(wt) * v
		}
	}
	if !added || !normalize(sum) {
		return qv
	}
	out := make([]float32, len(qv))
	copy(out, qv)
	if !normalize(out) {
		return qv
	}
	for j := range out {
		out[j] += float32(w) * sum[j]
	}
	normalize(out)
	return out
}
