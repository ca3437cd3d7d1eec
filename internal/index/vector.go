package index

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
)

// Hit is one search result: a document id (an ISRC in the track index) and
// its score, higher is better. For [VectorIndex] the score is the cosine
// similarity.
type Hit struct {
	ID    string
	Score float64
}

// DefaultCandidates is how many vectors a [VectorIndex] search takes at least
// from its first, Hamming-distance stage (see [VectorIndex.SetCandidates]).
const DefaultCandidates = 8000

// VectorIndex is an in-memory cosine-similarity index keyed by id.
//
// A search has three stages. It ranks every vector by the Hamming distance
// between one-bit codes (the sign of each component after subtracting the
// indexed vectors' mean), which costs a few popcounts per vector; it scores
// the best of those by the float query against their codes (an 8-bit table
// lookup per 8 dimensions); and it rescores the best eighth of those exactly
// in float32. The scores returned are exact cosines; only recall depends on
// the codes, and the number of candidates trades speed for it. Indexes small
// enough are scanned exactly.
//
// It is safe for concurrent use: searches share a read lock, writes take the
// write lock. Persistence is the caller's: the store keeps the vectors.
type VectorIndex struct {
	mu   sync.RWMutex
	dims int
	// candidatesMin and perK set the rescored set: max(candidatesMin, perK·k).
	candidatesMin, perK int

	ids  []string         // slot → id
	slot map[string]int32 // id → slot
	vecs []float32        // slot × dims, unit length

	words   int       // uint64 words per code
	codes   []uint64  // slot × words, valid when coded
	center  []float32 // mean the codes are relative to
	coded   bool
	codedAt int // Len when center was computed
}

// NewVectorIndex returns an empty index for vectors of the given length.
func NewVectorIndex(dims int) *VectorIndex {
	return &VectorIndex{
		dims:          dims,
		candidatesMin: DefaultCandidates,
		perK:          100,
		slot:          map[string]int32{},
		words:         (dims + 63) / 64,
	}
}

// SetCandidates sets how many vectors a search takes from its Hamming stage:
// at least minimum, and perK per requested result; a quarter of that per
// result, and at least an eighth of minimum, go on to the exact rescoring.
// More candidates give higher recall at a higher cost. Zero or negative
// values keep the current setting.
func (x *VectorIndex) SetCandidates(minimum, perK int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if minimum > 0 {
		x.candidatesMin = minimum
	}
	if perK > 0 {
		x.perK = perK
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
// validates every vector before changing anything and recomputes the codes
// once at the end.
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
	x.coded = false // re-centre on the whole batch
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
		}
	} else {
		copy(x.vecs[int(s)*x.dims:], v)
	}
	if x.coded {
		x.encode(x.codes[int(s)*x.words:int(s+1)*x.words], v)
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
		}
	}
	delete(x.slot, id)
	x.ids = x.ids[:last]
	x.vecs = x.vecs[:int(last)*x.dims]
	if x.coded {
		x.codes = x.codes[:int(last)*x.words]
	}
	x.maybeRecode()
	return true
}

// maybeRecode recomputes the centre and all codes when none exist yet or the
// index has doubled or halved since the centre was computed, so that the
// codes stay balanced as the content drifts; amortised, this is O(dims) per
// write. The caller holds the write lock.
func (x *VectorIndex) maybeRecode() {
	n := len(x.ids)
	if x.coded && n <= 2*x.codedAt+64 && 2*n+64 >= x.codedAt {
		return
	}
	x.center = make([]float32, x.dims)
	if n > 0 {
		sum := make([]float64, x.dims)
		for i := range n {
			for j, f := range x.vecs[i*x.dims : (i+1)*x.dims] {
				sum[j] += float64(f)
			}
		}
		for j := range sum {
			x.center[j] = float32(sum[j] / float64(n))
		}
	}
	x.codes = make([]uint64, n*x.words)
	for i := range n {
		x.encode(x.codes[i*x.words:(i+1)*x.words], x.vecs[i*x.dims:(i+1)*x.dims])
	}
	x.coded, x.codedAt = true, n
}

// encode writes v's one-bit code relative to the centre into code.
func (x *VectorIndex) encode(code []uint64, v []float32) {
	clear(code)
	for j, f := range v {
		if f > x.center[j] {
			code[j>>6] |= 1 << (uint(j) & 63)
		}
	}
}

// Search returns up to k ids most similar to query by cosine, best first.
// filter, when not nil, keeps only the ids it returns true for; it is called
// only for candidates, not for every vector. A query of the wrong length or
// with no direction returns nothing.
func (x *VectorIndex) Search(query []float32, k int, filter func(id string) bool) []Hit {
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
	n := len(x.ids)
	want := max(x.candidatesMin, x.perK*k)
	if want >= n/2 || !x.coded {
		return x.exact(q, k, filter)
	}
	qc := make([]uint64, x.words)
	x.encode(qc, q)

	// Hamming distances, then a counting sort by distance.
	dist := make([]uint16, n)
	counts := make([]int32, x.dims+2)
	w := x.words
	for i := range n {
		c := x.codes[i*w : i*w+w]
		d := 0
		for j, qw := range qc {
			d += bits.OnesCount64(c[j] ^ qw)
		}
		dist[i] = uint16(d)
		counts[d+1]++
	}
	for d := 1; d < len(counts); d++ {
		counts[d] += counts[d-1]
	}
	// Only slots up to the distance where want candidates are reached need
	// placing; with a filter, later buckets may be needed too.
	limit := x.dims
	if filter == nil {
		for d := 0; d <= x.dims; d++ {
			if int(counts[d+1]) >= want {
				limit = d
				break
			}
		}
	}
	order := make([]int32, counts[limit+1])
	for i, d := range dist {
		if int(d) <= limit {
			order[counts[d]] = int32(i)
			counts[d]++
		}
	}
	// Second stage: score the candidates by the float query against their
	// one-bit codes (asymmetric, much closer to the cosine than Hamming) and
	// keep the best for the exact rescoring.
	table := x.byteTable(q)
	keep := max(k, x.perK*k/4, x.candidatesMin/8)
	mid := newTopK(keep)
	taken := 0
	for _, s := range order {
		if taken >= want {
			break
		}
		if filter != nil && !filter(x.ids[s]) {
			continue
		}
		taken++
		mid.push(s, asymScore(table, x.codes[int(s)*w:int(s)*w+w]))
	}
	top := newTopK(k)
	for _, s := range mid.slots {
		top.push(s, dot(q, x.vecs[int(s)*x.dims:int(s+1)*x.dims]))
	}
	return top.hits(x.ids)
}

// byteTable returns, for each byte of a code, the 256 partial scores
// Σ ±(q−centre)_j over its 8 dimensions (+ where the bit is set).
func (x *VectorIndex) byteTable(q []float32) [][256]float32 {
	table := make([][256]float32, x.words*8)
	for p := range table {
		t := &table[p]
		var base float32
		var qs [8]float32
		for b := range 8 {
			if j := p*8 + b; j < x.dims {
				qs[b] = q[j] - x.center[j]
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

// asymScore is the inner product of the centred query with a code's ±1
// vector, read from a byteTable.
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

// dot is the inner product, unrolled by four.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
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
