package index

import "math/bits"

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
	n, d, w := len(x.ids), x.dims, x.words
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
	n, w, d := len(x.ids), x.words, x.dims
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
	table := x.byteTable(centred)
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
