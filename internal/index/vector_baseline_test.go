package index

import (
	"math"
	"math/bits"
)

// hammingBaseline is the search VectorIndex had before its codes carried an
// error bound, kept to measure against: one-bit codes of the mean-centred
// vectors (no rotation), the best candidatesMin (or perK·k) by Hamming
// distance, those rescored against the float query, and the best eighth of
// them rescored exactly. It reads x's vectors; x must not change meanwhile.
type hammingBaseline struct {
	x                   *VectorIndex
	candidatesMin, perK int
	center              []float32
	codes               []uint64
}

func newHammingBaseline(x *VectorIndex, candidatesMin, perK int) *hammingBaseline {
	b := &hammingBaseline{x: x, candidatesMin: candidatesMin, perK: perK}
	n, d, w := len(x.ids), x.dims, (x.dims+63)/64
	sum := make([]float64, d)
	for i := range n {
		for j, f := range x.vecs[i*d : (i+1)*d] {
			sum[j] += float64(f)
		}
	}
	b.center = make([]float32, d)
	for j := range sum {
		b.center[j] = float32(sum[j] / float64(max(n, 1)))
	}
	b.codes = make([]uint64, n*w)
	for i := range n {
		b.encode(b.codes[i*w:(i+1)*w], x.vecs[i*d:(i+1)*d])
	}
	return b
}

func (b *hammingBaseline) encode(code []uint64, v []float32) {
	clear(code)
	for j, f := range v {
		if f > b.center[j] {
			code[j>>6] |= 1 << (uint(j) & 63)
		}
	}
}

func (b *hammingBaseline) search(query []float32, k int) []Hit {
	x := b.x
	q := append([]float32(nil), query...)
	if !normalize(q) {
		return nil
	}
	n, w, d := len(x.ids), (x.dims+63)/64, x.dims
	want := max(b.candidatesMin, b.perK*k)
	qc := make([]uint64, w)
	b.encode(qc, q)
	dist := make([]uint16, n)
	counts := make([]int32, d+2)
	for i := range n {
		dd := 0
		for j, qw := range qc {
			dd += bits.OnesCount64(b.codes[i*w+j] ^ qw)
		}
		dist[i] = uint16(dd)
		counts[dd+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	limit := d
	for dd := 0; dd <= d; dd++ {
		if int(counts[dd+1]) >= want {
			limit = dd
			break
		}
	}
	order := make([]int32, counts[limit+1])
	for i, dd := range dist {
		if int(dd) <= limit {
			order[counts[dd]] = int32(i)
			counts[dd]++
		}
	}
	centred := make([]float32, d)
	for j := range q {
		centred[j] = q[j] - b.center[j]
	}
	table := byteTable(centred)
	mid := newTopK(max(k, b.perK*k/4, b.candidatesMin/8))
	for taken, s := range order {
		if taken >= want {
			break
		}
		mid.push(s, asymScore(table, b.codes[int(s)*w:int(s)*w+w]))
	}
	top := newTopK(k)
	for _, s := range mid.slots {
		top.push(s, dot(q, x.vecs[int(s)*d:int(s+1)*d]))
	}
	return top.hits(x.ids)
}

// byteTable returns, for each byte of a code, the 256 partial sums
// Σ ±q_j over its 8 dimensions (+ where the bit is set).
func byteTable(q []float32) [][256]float32 {
	table := make([][256]float32, (len(q)+63)/64*8)
	for p := range table {
		t := &table[p]
		var base float32
		var qs [8]float32
		for b := range 8 {
			if j := p*8 + b; j < len(q) {
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

// mainSearch is VectorIndex.search as main had it before the second stage
// (vector_refine.go), loop for loop: the same one-bit codes and fast scan,
// every candidate rescored exactly. It reads x; x must not change
// meanwhile.
func mainSearch(x *VectorIndex, query []float32, k int) ([]Hit, int) {
	q := append([]float32(nil), query...)
	if !normalize(q) {
		return nil, 0
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	qr := make([]float32, x.dims)
	x.rot.apply(qr, q)
	base := dot(qr, x.center) + boundSlack
	lut := make([]byte, 32*x.pairs)
	delta, offset := quantizeTable(qr, x.pairs, lut)
	c := scanConsts{delta: float32(delta), offset: float32(offset), eps: x.epsilon}
	tab := x.scanner.table(lut, x.pairs)
	top := newTopK(k)
	d := x.dims
	rescored := 0
	var masks [scanChunk]uint32
	var vals [scanChunk * blockVecs]float32
	var score [1]float32
	blocks := (n + blockVecs - 1) / blockVecs
	for b0 := 0; b0 < blocks; {
		step, thr := 1, float32(math.Inf(-1))
		if len(top.slots) == top.k {
			step, thr = min(scanChunk, blocks-b0), top.score[0]
		}
		c.threshold = thr - base
		x.scanner.scan(x.codes[b0*blockVecs*x.pairs:], x.factors[b0*2*blockVecs:], step, x.pairs, &tab, &c, masks[:step], vals[:])
		for j, m := range masks[:step] {
			for ; m != 0; m &= m - 1 {
				i := (b0+j)*blockVecs + int(blockVec[bits.TrailingZeros32(m)])
				if i >= n {
					continue
				}
				rescored++
				dots(q, x.vecs[i*d:i*d+d], score[:])
				top.push(int32(i), score[0])
			}
		}
		b0 += step
	}
	return top.hits(x.ids), rescored
}
