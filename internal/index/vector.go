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
// P(Z > 2) ≈ 2.3% (the k-th; better ones less), whatever the data and the
// index size: recall@10 measures 0.99 (BENCHMARKS.md).
const DefaultErrorBound = 2

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
// with the query (one 8-bit table lookup per 8 dimensions) together with a
// bound on the estimate's error that depends on the vector, not on the data
// set; only vectors whose bound reaches the k best exact cosines found so far
// are rescored exactly in float32. The number of vectors rescored therefore
// grows with what the data needs: few when the neighbours stand out, more
// when they barely do (uniformly random vectors), and recall does not decay
// with the index size. The scores returned are exact cosines. Indexes small
// enough are scanned exactly.
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

	words   int       // uint64 words per code
	codes   []uint64  // slot × words, valid when coded
	factors []float32 // slot × 2: scale and error of the estimate, valid when coded
	center  []float32 // rotated mean the codes are relative to
	coded   bool
	codedAt int // Len when center was computed

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
		words:      (dims + 63) / 64,
	}
}

// SetErrorBound sets how many standard errors of a vector's estimated cosine
// a search allows before it skips rescoring the vector exactly: more gives a
// higher recall at a higher cost (recall@10 about 0.97 at 1.5, 0.99 at 2,
// 0.998 at 2.5, whatever the data). Zero or negative values keep the current setting.
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
	prepared := make([][]float32, len(vecs))
	for i, v := range vecs {
		p, err := x.prepare(v)
		if err != nil {
			return fmt.Errorf("index: vector %d (%q): %w", i, ids[i], err)
		}
		prepared[i] = p
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.coded && len(ids) > 2*x.codedAt+64 {
		x.coded = false // the batch would be coded twice: once now, once re-centred
	}
	for i, id := range ids {
		x.put(id, prepared[i])
	}
	x.maybeRecode()
	return nil
}

func (x *VectorIndex) prepare(vec []float32) ([]float32, error) {
	if len(vec) != x.dims {
		return nil, fmt.Errorf("%w: got %d, want %d", ErrDimensions, len(vec), x.dims)
	}
	v := make([]float32, len(vec))
	copy(v, vec)
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, errNotFinite
		}
	}
	normalize(v)
	return v, nil
}

// put stores v under id; the caller holds the write lock.
func (x *VectorIndex) put(id string, v []float32) {
	s, ok := x.slot[id]
	if !ok {
		s = int32(len(x.ids))
		x.slot[id] = s
		x.ids = append(x.ids, id)
		x.vecs = append(x.vecs, v...)
		if x.coded {
			x.codes = append(x.codes, make([]uint64, x.words)...)
			x.factors = append(x.factors, 0, 0)
		}
	} else {
		copy(x.vecs[int(s)*x.dims:], v)
	}
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
		if x.coded {
			copy(x.codes[int(s)*x.words:int(s+1)*x.words], x.codes[int(last)*x.words:])
			copy(x.factors[2*s:2*s+2], x.factors[2*last:])
		}
	}
	delete(x.slot, id)
	x.ids = x.ids[:last]
	x.vecs = x.vecs[:int(last)*x.dims]
	if x.coded {
		x.codes = x.codes[:int(last)*x.words]
		x.factors = x.factors[:2*last]
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
	x.codes = make([]uint64, n*x.words)
	x.factors = make([]float32, 2*n)
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
	code := x.codes[s*x.words : (s+1)*x.words]
	x.rot.apply(buf, x.vecs[s*x.dims:(s+1)*x.dims])
	clear(code)
	var norm2, abs float64
	for j, f := range buf {
		o := f - x.center[j]
		if o > 0 {
			code[j>>6] |= 1 << (uint(j) & 63)
		}
		norm2 += float64(o) * float64(o)
		abs += math.Abs(float64(o))
	}
	f := x.factors[2*s : 2*s+2]
	if abs == 0 { // the vector is the centre: the estimate is exact
		f[0], f[1] = 0, 0
		return
	}
	norm := math.Sqrt(norm2)
	ip := abs / (norm * math.Sqrt(float64(x.dims))) // ⟨ō,o⟩ for unit o
	f[0] = float32(norm2 / abs)
	f[1] = float32(norm * math.Sqrt(max(0, 1-ip*ip)) / ip / math.Sqrt(float64(max(x.dims-1, 1))))
}

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

// search is Search that also reports how many vectors were rescored exactly.
func (x *VectorIndex) search(query []float32, k int, filter func(id string) bool) ([]Hit, int) {
	if len(query) != x.dims || k <= 0 {
		return nil, 0
	}
	q := make([]float32, len(query))
	copy(q, query)
	if !normalize(q) {
		return nil, 0
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	if n < x.exactBelow || n <= k || !x.coded {
		return x.exact(q, k, filter), n
	}
	qr := make([]float32, x.dims)
	x.rot.apply(qr, q)
	base := dot(qr, x.center) + boundSlack
	table := x.byteTable(qr)
	eps := x.epsilon
	top := newTopK(k)
	w, d := x.words, x.dims
	rescored := 0
	for i := range n {
		f := x.factors[2*i : 2*i+2]
		ub := base + f[0]*asymScore(table, x.codes[i*w:i*w+w]) + eps*f[1]
		if !top.wants(ub) {
			continue
		}
		if filter != nil && !filter(x.ids[i]) {
			continue
		}
		rescored++
		top.push(int32(i), dot(q, x.vecs[i*d:i*d+d]))
	}
	return top.hits(x.ids), rescored
}

// byteTable returns, for each byte of a code, the 256 partial sums
// Σ ±q_j over its 8 dimensions (+ where the bit is set).
func (x *VectorIndex) byteTable(q []float32) [][256]float32 {
	table := make([][256]float32, x.words*8)
	for p := range table {
		t := &table[p]
		var base float32
		var qs [8]float32
		for b := range 8 {
			if j := p*8 + b; j < x.dims {
				qs[b] = q[j]
				base -= qs[b]
			}
		}
		t[0] = base
		for v := 1; v < 256; v++ {
			low := bits.TrailingZeros8(uint8(v))
			t[v] = t[v&(v-1)] + 2*qs[low]
		}
	}
	return table
}

// asymScore is the inner product of the query with a code's ±1 vector, read
// from a byteTable.
func asymScore(table [][256]float32, code []uint64) float32 {
	var s float32
	for i, c := range code {
		t := table[i*8 : i*8+8]
		s += t[0][uint8(c)] + t[1][uint8(c>>8)] + t[2][uint8(c>>16)] + t[3][uint8(c>>24)] +
			t[4][uint8(c>>32)] + t[5][uint8(c>>40)] + t[6][uint8(c>>48)] + t[7][uint8(c>>56)]
	}
	return s
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
