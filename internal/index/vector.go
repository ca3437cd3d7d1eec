package index

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Hit is one search result: a document id (an ISRC in the track index) and
// its score, higher is better. For [VectorIndex] the score is the cosine
// similarity.
type Hit struct {
	ID    string
	Score float64
}

// DefaultErrorBound is the confidence multiplier of a [VectorIndex] search
// (see [VectorIndex.SetErrorBound]): a vector is rescored exactly unless its
// estimated cosine plus this many standard errors of the estimate is below
// the k-th best exact cosine found so far. The estimate's error is close to
// normal, so a true neighbour is skipped with probability at most about
// P(Z > 1.7) ≈ 4.5% (the k-th; better ones less), whatever the index size.
// It was chosen by BenchmarkErrorBound: 1.7 is one step of its grid above
// the smallest multiplier whose recall@10 reached 0.985 on uniform and
// clustered data at 100k (1.6: 0.9855 on uniform data), and it measured
// 0.9885–0.999 on those and on held-out sets at 100k and 1M (BENCHMARKS.md),
// with a third fewer vectors past the one-bit bound than at 2.
const DefaultErrorBound = 1.7

// DefaultExactBelow is the index size under which a search scans every
// vector exactly: a few milliseconds at most, and no recall to lose (the
// search this index had before was exact up to about this size at k = 10).
const DefaultExactBelow = 20000

// VectorIndex is an in-memory cosine-similarity index keyed by id.
//
// Each vector is kept in float32 and as a one-bit code: the signs of its
// components after a fixed random rotation and the subtraction of the
// indexed vectors' mean, with two factors (the RaBitQ scheme of Gao and
// Long, SIGMOD 2024). From the code, a search estimates each vector's cosine
// with the query together with a bound on the estimate's error that depends
// on the vector, not on the data set; only vectors whose bound reaches the k
// best exact cosines found so far are rescored exactly in float32. The
// estimates are computed 32 vectors at a time from 8-bit tables of the
// query's partial sums over 4 dimensions, by byte shuffles in AVX-512 or
// AVX2 where the CPU has them (vector_fastscan.go); the tables' rounding is
// added to the bound, so it costs rescoring, never recall. The number of vectors that
// pass therefore grows with what the data needs: few when the neighbours
// stand out, more when they barely do (uniformly random vectors), and recall
// does not decay with the index size. Each that passes is bounded again from
// an 8-bit code of the vector, strictly, and rescored exactly only if that
// bound still reaches the k best (vector_refine.go): the same results as
// rescoring every one, from a few hundred exact cosines instead of tens of
// thousands. The scores returned are exact cosines. Indexes small enough are
// scanned exactly.
//
// It is safe for concurrent use: searches share a read lock, writes take the
// write lock. The store keeps the vectors; [VectorIndex.MarshalBinary] saves
// the codes so that a process can skip computing them.
type VectorIndex struct {
	mu         sync.RWMutex
	dims       int
	exactBelow int
	epsilon    float32 // error bound multiplier
	rot        rotation

	ids  []string         // slot → id
	slot map[string]int32 // id → slot
	vecs []float32        // slot × dims, unit length

	pairs   int       // code bytes per vector (8 dimensions each)
	codes   []byte    // blocks of 32 vectors × pairs bytes (vector_fastscan.go), valid when coded
	factors []float32 // blocks of 32 scales and 32 error bounds of the estimate, valid when coded
	center  []float32 // rotated mean the codes are relative to
	coded   bool
	codedAt int // Len when center was computed
	scanner fastScanner

	// The second stage's codes (vector_refine.go), kept for every vector
	// whether coded or not: they depend on the vector alone.
	rstride int       // code bytes per vector
	rcodes  []int8    // slot × rstride
	rfac    []float32 // slot × (scale, residual)

	scratch sync.Pool // *scanScratch, the exact scan's scores
	fuse    sync.Pool // *fuseScratch, the hybrid's fused scores (rank_fuse.go)
}

// NewVectorIndex returns an empty index for vectors of the given length.
func NewVectorIndex(dims int) *VectorIndex {
	return &VectorIndex{
		dims:       dims,
		exactBelow: DefaultExactBelow,
		epsilon:    DefaultErrorBound,
		rot:        newRotation(dims),
		slot:       map[string]int32{},
		pairs:      (dims + 7) / 8,
		rstride:    refineStride(dims),
		scanner:    newFastScanner(),
	}
}

// SetErrorBound sets how many standard errors of a vector's estimated cosine
// a search allows before it skips rescoring the vector exactly: more gives a
// higher recall at a higher cost. Measured recall@10 on uniform vectors, the
// hardest case, at 100k and 1M: 0.966–0.976 at 1.25, 0.9825–0.9885 at 1.5,
// 0.9885–0.993 at 1.7, 0.994–0.997 at 2, 0.999–1 at 2.5; clustered data is
// higher (BenchmarkErrorBound). Zero or negative values keep the current
// setting.
func (x *VectorIndex) SetErrorBound(epsilon float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if epsilon > 0 {
		x.epsilon = float32(epsilon)
	}
}

// SetExactBelow sets the index size below which searches scan exactly (0
// always uses the codes). Negative values keep the current setting.
func (x *VectorIndex) SetExactBelow(n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if n >= 0 {
		x.exactBelow = n
	}
}

// Dimensions is the vector length the index accepts.
func (x *VectorIndex) Dimensions() int { return x.dims }

// Len is the number of vectors held.
func (x *VectorIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids)
}

// Has reports whether id is indexed.
func (x *VectorIndex) Has(id string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.slot[id]
	return ok
}

// Reserve makes room for n more vectors, so that a bulk load of a known
// size grows the flat arrays once instead of copying them at each doubling
// (at a million 384-d vectors, a doubling copies 1.5 GB).
func (x *VectorIndex) Reserve(n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if n <= 0 {
		return
	}
	x.ids = slices.Grow(x.ids, n)
	x.vecs = slices.Grow(x.vecs, n*x.dims)
	x.rcodes = slices.Grow(x.rcodes, n*x.rstride)
	x.rfac = slices.Grow(x.rfac, 2*n)
	if len(x.slot) == 0 {
		x.slot = make(map[string]int32, n)
	}
}

// ErrDimensions is returned for a vector of the wrong length.
var ErrDimensions = errors.New("index: vector has the wrong number of dimensions")

// errNotFinite is returned for vectors holding NaN or ±Inf.
var errNotFinite = errors.New("index: vector has a NaN or infinite component")

// Add inserts or replaces the vector for id. The vector is copied and
// normalised; a zero vector is accepted and matches nothing.
func (x *VectorIndex) Add(id string, vec []float32) error {
	v, err := x.prepare(vec)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.put(id, v)
	x.maybeRecode()
	return nil
}

// AddBatch inserts or replaces many vectors at once: the bulk load path. It
// validates every vector before changing anything and codes the batch at
// once at the end (re-centring all codes when the index has doubled).
func (x *VectorIndex) AddBatch(ids []string, vecs [][]float32) error {
	if len(ids) != len(vecs) {
		return fmt.Errorf("index: %d ids for %d vectors", len(ids), len(vecs))
	}
	for i, v := range vecs {
		if err := x.check(v); err != nil {
			return fmt.Errorf("index: vector %d (%q): %w", i, ids[i], err)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.coded && len(ids) > 2*x.codedAt+64 {
		x.coded = false // the batch would be coded twice: once now, once re-centred
	}
	// No normalised copy of the batch: at a million 384-d vectors it
	// would add 1.5 GB to the build's peak. Each vector is normalised in
	// the scratch v, then copied in.
	x.ids = slices.Grow(x.ids, len(ids))
	x.vecs = slices.Grow(x.vecs, len(ids)*x.dims)
	x.rcodes = slices.Grow(x.rcodes, len(ids)*x.rstride)
	x.rfac = slices.Grow(x.rfac, 2*len(ids))
	v := make([]float32, x.dims)
	for i, id := range ids {
		copy(v, vecs[i])
		normalize(v)
		x.put(id, v)
	}
	x.maybeRecode()
	return nil
}

func (x *VectorIndex) prepare(vec []float32) ([]float32, error) {
	if err := x.check(vec); err != nil {
		return nil, err
	}
	v := make([]float32, len(vec))
	copy(v, vec)
	normalize(v)
	return v, nil
}

// check reports whether vec can be indexed: the right length, all finite.
func (x *VectorIndex) check(vec []float32) error {
	if len(vec) != x.dims {
		return fmt.Errorf("%w: got %d, want %d", ErrDimensions, len(vec), x.dims)
	}
	for _, f := range vec {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return errNotFinite
		}
	}
	return nil
}

// put stores v under id; the caller holds the write lock.
func (x *VectorIndex) put(id string, v []float32) {
	s, ok := x.slot[id]
	if !ok {
		s = int32(len(x.ids))
		x.slot[id] = s
		x.ids = append(x.ids, id)
		x.vecs = append(x.vecs, v...)
		x.rcodes = append(x.rcodes, make([]int8, x.rstride)...)
		x.rfac = append(x.rfac, 0, 0)
		if x.coded && int(s)%blockVecs == 0 { // a new block
			x.codes = append(x.codes, make([]byte, blockVecs*x.pairs)...)
			x.factors = append(x.factors, make([]float32, 2*blockVecs)...)
		}
	} else {
		copy(x.vecs[int(s)*x.dims:], v)
	}
	x.refineSlot(int(s))
	if x.coded {
		x.encode(int(s), make([]float32, x.dims))
	}
}

// Remove deletes id's vector and reports whether it was there.
func (x *VectorIndex) Remove(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	s, ok := x.slot[id]
	if !ok {
		return false
	}
	last := int32(len(x.ids) - 1)
	if s != last { // move the last slot into the hole
		moved := x.ids[last]
		x.ids[s] = moved
		x.slot[moved] = s
		copy(x.vecs[int(s)*x.dims:int(s+1)*x.dims], x.vecs[int(last)*x.dims:])
		copy(x.rcodes[int(s)*x.rstride:int(s+1)*x.rstride], x.rcodes[int(last)*x.rstride:])
		x.rfac[2*int(s)], x.rfac[2*int(s)+1] = x.rfac[2*int(last)], x.rfac[2*int(last)+1]
		if x.coded {
			x.moveCode(int(s), int(last))
		}
	}
	delete(x.slot, id)
	x.ids = x.ids[:last]
	x.vecs = x.vecs[:int(last)*x.dims]
	x.rcodes = x.rcodes[:int(last)*x.rstride]
	x.rfac = x.rfac[:2*int(last)]
	if x.coded {
		if int(last)%blockVecs == 0 { // the last block is empty
			x.codes = x.codes[:int(last)/blockVecs*blockVecs*x.pairs]
			x.factors = x.factors[:int(last)/blockVecs*2*blockVecs]
		} else {
			x.clearCode(int(last))
		}
	}
	x.maybeRecode()
	return true
}

// maybeRecode recomputes the centre and all codes when none exist yet or the
// index has doubled or halved since the centre was computed, so that the
// codes stay tight as the content drifts; amortised, this is O(dims) per
// write. The caller holds the write lock.
func (x *VectorIndex) maybeRecode() {
	n := len(x.ids)
	if x.coded && n <= 2*x.codedAt+64 && 2*n+64 >= x.codedAt {
		return
	}
	mean := make([]float32, x.dims)
	if n > 0 {
		sum := make([]float64, x.dims)
		for i := range n {
			for j, f := range x.vecs[i*x.dims : (i+1)*x.dims] {
				sum[j] += float64(f)
			}
		}
		for j := range sum {
			mean[j] = float32(sum[j] / float64(n))
		}
	}
	// The rotation is linear: the rotated mean is the mean of the rotated.
	x.center = make([]float32, x.dims)
	x.rot.apply(x.center, mean)
	blocks := (n + blockVecs - 1) / blockVecs
	x.codes = make([]byte, blocks*blockVecs*x.pairs)
	x.factors = make([]float32, blocks*2*blockVecs)
	buf := make([]float32, x.dims)
	for i := range n {
		x.encode(i, buf)
	}
	x.coded, x.codedAt = true, n
}

// encode computes slot s's code and factors from its vector, using buf
// (dims long) as scratch. With o the rotated vector minus the centre, the
// code holds the signs of o; the estimate of ⟨q,o⟩ for a rotated unit query
// q is ⟨q,ō⟩/⟨ō,o⟩, ō being the code as a unit ±1/√D vector, and its error
// is at most ε·√((1−⟨ō,o⟩²)/⟨ō,o⟩²)/√(D−1) with a probability that grows
// with ε (Gao and Long, Theorem 3.2). The factors fold ‖o‖ and the √D in:
// ⟨q,v⟩ ≈ ⟨q,centre⟩ + scale·Σ±q_j, error ≤ ε·bound.
func (x *VectorIndex) encode(s int, buf []float32) {
	x.rot.apply(buf, x.vecs[s*x.dims:(s+1)*x.dims])
	code, stride := x.codeBytes(s)
	var norm2, abs float64
	var c byte
	for j, f := range buf {
		o := f - x.center[j]
		if o > 0 {
			c |= 1 << (j & 7)
		}
		if j&7 == 7 || j == len(buf)-1 {
			code[(j>>3)*stride] = c
			c = 0
		}
		norm2 += float64(o) * float64(o)
		abs += math.Abs(float64(o))
	}
	scale, bound := x.factorsOf(s)
	if abs == 0 { // the vector is the centre: the estimate is exact
		*scale, *bound = 0, 0
		return
	}
	norm := math.Sqrt(norm2)
	ip := abs / (norm * math.Sqrt(float64(x.dims))) // ⟨ō,o⟩ for unit o
	*scale = float32(norm2 / abs)
	*bound = float32(norm * math.Sqrt(max(0, 1-ip*ip)) / ip / math.Sqrt(float64(max(x.dims-1, 1))))
}

// codeBytes returns slot s's first code byte onwards and the distance
// between its successive bytes (the block layout of vector_fastscan.go).
func (x *VectorIndex) codeBytes(s int) ([]byte, int) {
	return x.codes[(s/blockVecs)*blockVecs*x.pairs+s%blockVecs:], blockVecs
}

// factorsOf points at slot s's scale and error bound.
func (x *VectorIndex) factorsOf(s int) (scale, bound *float32) {
	i := (s/blockVecs)*2*blockVecs + blockPos(s%blockVecs)
	return &x.factors[i], &x.factors[i+blockVecs]
}

// moveCode copies slot from's code and factors to slot to and clears
// from's.
func (x *VectorIndex) moveCode(to, from int) {
	dst, stride := x.codeBytes(to)
	src, _ := x.codeBytes(from)
	for p := range x.pairs {
		dst[p*stride] = src[p*stride]
	}
	ts, tb := x.factorsOf(to)
	fs, fb := x.factorsOf(from)
	*ts, *tb = *fs, *fb
	x.clearCode(from)
}

// clearCode zeroes slot s's code and factors, for a slot past the last:
// searches ignore such slots.
func (x *VectorIndex) clearCode(s int) {
	code, stride := x.codeBytes(s)
	for p := range x.pairs {
		code[p*stride] = 0
	}
	scale, bound := x.factorsOf(s)
	*scale, *bound = 0, 0
}

// scanChunk is how many blocks the search scans between updates of its
// threshold: large enough that the kernel's call costs nothing, small enough
// that a threshold that has risen meanwhile lets few vectors through.
const scanChunk = 16

// Search returns up to k ids most similar to query by cosine, best first.
// filter, when not nil, keeps only the ids it returns true for; it is called
// only for candidates, not for every vector. A query of the wrong length or
// with no direction returns nothing.
func (x *VectorIndex) Search(query []float32, k int, filter func(id string) bool) []Hit {
	hits, _ := x.search(query, k, filter)
	return hits
}

// pool is Search for the hybrid's fusion: the same hits, in no particular
// order when that is cheaper (the exact scan without a filter).
func (x *VectorIndex) pool(query []float32, k int, filter func(id string) bool) []Hit {
	if filter != nil || len(query) != x.dims || k <= 0 {
		return x.Search(query, k, filter)
	}
	x.mu.RLock()
	n := len(x.ids)
	exact := n < x.exactBelow || n <= k || !x.coded
	x.mu.RUnlock()
	if !exact {
		return x.Search(query, k, nil)
	}
	q := make([]float32, len(query))
	copy(q, query)
	if !normalize(q) {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	// Coded since? The exact scan is right whatever the size.
	return x.exactAll(q, k, false)
}

// boundSlack absorbs float32 rounding between an estimate on rotated vectors
// and the exact cosine on the originals.
const boundSlack = 1e-5

// searchCounts is what a search did: how many vectors passed the one-bit
// codes' bound to the second stage's estimate, and how many of those were
// rescored exactly.
type searchCounts struct{ estimated, exact int }

// scannedChunk is a scanned chunk's candidates (slots in the kernel's
// order) and their bounds as the kernel computed them, less the base.
type scannedChunk struct {
	cand []int32
	vals []float32
}

// search is Search that also reports what it did.
func (x *VectorIndex) search(query []float32, k int, filter func(id string) bool) ([]Hit, searchCounts) {
	if len(query) != x.dims || k <= 0 {
		return nil, searchCounts{}
	}
	q := make([]float32, len(query))
	copy(q, query)
	if !normalize(q) {
		return nil, searchCounts{}
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	if n < x.exactBelow || n <= k || !x.coded || x.pairs > maxScanPairs {
		return x.exact(q, k, filter), searchCounts{exact: n}
	}
	rq := newRefineQuery(q, x.rstride)
	cand := make([]int32, 0, scanChunk*blockVecs)
	sums := make([]int32, 0, scanChunk*blockVecs)
	qr := make([]float32, x.dims)
	x.rot.apply(qr, q)
	// A vector's cosine is at most base + scale·Σ±qr_j + eps·bound, and
	// Σ±qr_j ≤ S·delta + offset for its table sum S (quantizeTable).
	base := dot(qr, x.center) + boundSlack
	lut := make([]byte, 32*x.pairs)
	delta, offset := quantizeTable(qr, x.pairs, lut)
	c := scanConsts{delta: float32(delta), offset: float32(offset), eps: x.epsilon}
	tab := x.scanner.table(lut, x.pairs)
	top := newTopK(k)
	d := x.dims
	var counts searchCounts
	var masks [scanChunk]uint32
	vals := make([]float32, scanChunk*blockVecs)
	var score [1]float32

	// settle runs the second stage and the exact rescoring on a scanned
	// chunk's candidates, once every chunk before it is settled: first
	// those whose bound (vals) exceeds the threshold a scan now would
	// use, which are exactly the candidates such a scan would pass.
	settle := func(p *scannedChunk) {
		limit := float32(math.Inf(-1))
		if len(top.slots) == top.k {
			limit = top.score[0] - base
		}
		cand = cand[:0]
		for ci, i := range p.cand {
			if p.vals[ci] > limit && (filter == nil || filter(x.ids[i])) {
				cand = append(cand, i)
			}
		}
		sums = slices.Grow(sums[:0], len(cand))[:len(cand)]
		x.scanner.refineDots(rq.ints, x.rcodes, x.rfac, cand, sums)
		counts.estimated += len(cand)
		for ci, i := range cand {
			// Until k are in, every vector is pushed; after, only one
			// whose 8-bit bound reaches the k-th (a tie may enter).
			if len(top.slots) == top.k && rq.upper(sums[ci], x.rfac[2*int(i)], x.rfac[2*int(i)+1]) < top.score[0] {
				continue
			}
			counts.exact++
			dots(q, x.vecs[int(i)*d:int(i)*d+d], score[:])
			top.push(i, score[0])
		}
	}
	// The scan runs a chunk ahead of the second stage: chunk c+1 is
	// scanned and its candidates' codes asked for before chunk c is
	// settled, so that memory fetches them while the kernel scans (each is
	// a few cache lines at a random slot). Chunk c+1 is then scanned with
	// the threshold from before chunk c's exact cosines, at most the one a
	// scan after them would use: it passes those vectors and a few more,
	// which settle screens out again.
	var chunks [2]scannedChunk
	var pending *scannedChunk
	blocks := (n + blockVecs - 1) / blockVecs
	for b0 := 0; b0 < blocks || pending != nil; {
		// Until k vectors are in, every vector is a candidate: one block
		// at a time, so that a threshold exists soon, each chunk settled
		// before the next is scanned.
		full := len(top.slots) == top.k
		if b0 == blocks || (pending != nil && !full) {
			settle(pending)
			pending = nil
			continue
		}
		step, thr := 1, float32(math.Inf(-1))
		if full {
			step, thr = min(scanChunk, blocks-b0), top.score[0]
		}
		c.threshold = thr - base
		x.scanner.scan(x.codes[b0*blockVecs*x.pairs:], x.factors[b0*2*blockVecs:], step, x.pairs, &tab, &c, masks[:step], vals[:step*blockVecs])
		next := &chunks[0]
		if pending == next {
			next = &chunks[1]
		}
		next.cand, next.vals = next.cand[:0], next.vals[:0]
		for j, m := range masks[:step] {
			for ; m != 0; m &= m - 1 {
				p := bits.TrailingZeros32(m)
				i := (b0+j)*blockVecs + int(blockVec[p])
				if i >= n {
					continue
				}
				next.cand = append(next.cand, int32(i))
				next.vals = append(next.vals, vals[j*blockVecs+p])
			}
		}
		x.scanner.prefetchRefine(x.rcodes, x.rfac, x.rstride, next.cand)
		b0 += step
		if pending != nil {
			settle(pending)
		}
		pending = next
	}
	return top.hits(x.ids), counts
}

// SearchExact is [VectorIndex.Search] by an exact float32 scan of every
// vector: the reference that recall is measured against, and the method for
// small indexes.
func (x *VectorIndex) SearchExact(query []float32, k int, filter func(id string) bool) []Hit {
	if len(query) != x.dims || k <= 0 {
		return nil
	}
	q := make([]float32, len(query))
	copy(q, query)
	if !normalize(q) {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.exact(q, k, filter)
}

func (x *VectorIndex) exact(q []float32, k int, filter func(string) bool) []Hit {
	if filter == nil {
		return x.exactAll(q, k, true)
	}
	top := newTopK(k)
	for i := range x.ids {
		s := dot(q, x.vecs[i*x.dims:(i+1)*x.dims])
		if !top.wants(s) {
			continue
		}
		if filter != nil && !filter(x.ids[i]) {
			continue
		}
		top.push(int32(i), s)
	}
	return top.hits(x.ids)
}

// slotScore is a slot's cosine with the query.
type slotScore struct {
	slot  int32
	score float32
}

// bySlotScore is topK's order, best first: higher score, then lower slot.
func bySlotScore(a, b slotScore) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	return int(a.slot - b.slot)
}

// scanScratch is what an exact scan reuses between searches.
type scanScratch struct {
	scores []float32   // slot → cosine
	all    []slotScore // the same, for the selection
}

// exactAll is exact without a filter: every cosine into a reused buffer, then
// a selection of the k best. It returns what the heap returns (the order is
// total), but the search pools take a thousand of a few thousand vectors,
// where a heap that size cost more than the dot products.
func (x *VectorIndex) exactAll(q []float32, k int, sorted bool) []Hit {
	buf, _ := x.scratch.Get().(*scanScratch)
	if buf == nil {
		buf = new(scanScratch)
	}
	n := len(x.ids)
	scores := slices.Grow(buf.scores[:0], n)[:n]
	dots(q, x.vecs[:n*x.dims], scores)
	all := slices.Grow(buf.all[:0], n)[:n]
	for i, s := range scores {
		all[i] = slotScore{int32(i), s}
	}
	top := selectSet(all, k, bySlotScore)
	if sorted {
		slices.SortFunc(top, bySlotScore)
	}
	out := make([]Hit, len(top))
	for i, s := range top {
		out[i] = Hit{ID: x.ids[s.slot], Score: float64(s.score)}
	}
	buf.scores, buf.all = scores[:0], all[:0]
	x.scratch.Put(buf)
	return out
}

// dot is the inner product, unrolled by four. Each product is rounded to
// float32 before it is added (the conversion forbids fusing them into one
// multiply-add, which some targets would do), so that dot and dots give
// the same bits everywhere.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float32(a[i] * b[i])
		s1 += float32(a[i+1] * b[i+1])
		s2 += float32(a[i+2] * b[i+2])
		s3 += float32(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i] * b[i])
	}
	return s0 + s1 + s2 + s3
}

// dotsGeneric is dots in Go, row by row.
func dotsGeneric(q, vecs []float32, out []float32) {
	d := len(q)
	for j := range out {
		out[j] = dot(q, vecs[j*d:(j+1)*d])
	}
}

// normalize scales v to unit length and reports whether it had any length.
func normalize(v []float32) bool {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// topK keeps the k best (slot, score) pairs in a min-heap on score; ties go
// to the lower slot so results are deterministic.
type topK struct {
	k     int
	slots []int32
	score []float32
}

func newTopK(k int) *topK {
	return &topK{k: k, slots: make([]int32, 0, k), score: make([]float32, 0, k)}
}

// wants reports whether a score could enter the heap.
func (t *topK) wants(s float32) bool {
	return len(t.slots) < t.k || s > t.score[0]
}

func (t *topK) less(i, j int) bool {
	if t.score[i] != t.score[j] {
		return t.score[i] < t.score[j]
	}
	return t.slots[i] > t.slots[j]
}

func (t *topK) swap(i, j int) {
	t.slots[i], t.slots[j] = t.slots[j], t.slots[i]
	t.score[i], t.score[j] = t.score[j], t.score[i]
}

func (t *topK) push(slot int32, s float32) {
	if t.k <= 0 {
		return
	}
	if len(t.slots) < t.k {
		t.slots = append(t.slots, slot)
		t.score = append(t.score, s)
		for i := len(t.slots) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.less(i, p) {
				break
			}
			t.swap(i, p)
			i = p
		}
		return
	}
	if s < t.score[0] || (s == t.score[0] && slot > t.slots[0]) {
		return
	}
	t.slots[0], t.score[0] = slot, s
	t.down(0, len(t.slots))
}

func (t *topK) down(i, n int) {
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.less(r, l) {
			m = r
		}
		if !t.less(m, i) {
			return
		}
		t.swap(i, m)
		i = m
	}
}

// hits empties the heap into a best-first slice.
func (t *topK) hits(ids []string) []Hit {
	out := make([]Hit, len(t.slots))
	for n := len(t.slots); n > 0; n-- {
		out[n-1] = Hit{ID: ids[t.slots[0]], Score: float64(t.score[0])}
		t.swap(0, n-1)
		t.down(0, n-1)
	}
	t.slots, t.score = t.slots[:0], t.score[:0]
	return out
}
