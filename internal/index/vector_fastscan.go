package index

import (
	"math"
	"math/bits"
)

// The codes are scanned 32 vectors at a time ("fast scan", after the
// layouts of RaBitQ's and Faiss's fast-scan kernels, written here from their
// published description): a block holds, for each byte of the one-bit codes
// (8 dimensions), that byte of its 32 vectors side by side, so that one
// 32-byte load brings the same 8 dimensions of all 32 vectors. Each half
// byte indexes a 16-entry table of the query's partial sums over its 4
// dimensions, quantized to 8 bits, and a byte shuffle (PSHUFB) looks up 32
// of them at once (AVX2; AVX-512 shuffles two code bytes' 64 at once). The
// quantization adds an error of at most half a step
// per half byte, which the search adds to the estimate's error bound: a
// vector is never skipped for it.
//
// A block's factors follow the order in which the kernel produces its sums
// (see blockPos): 32 scales, then 32 error bounds.

const (
	blockVecs = 32 // vectors per block

	// maxScanPairs bounds the code bytes per vector the kernel's 16-bit
	// sums allow (see quantizeTable); longer vectors are scanned exactly.
	maxScanPairs = 8192
)

// blockPos is the position of vector v (0–31) of a block in the kernel's
// output: its 16-bit sums come out as the even vectors 0–14, the even
// vectors 16–30, the odd 1–15 and the odd 17–31.
func blockPos(v int) int { return (v&1)*16 + (v>>4)*8 + (v&15)>>1 }

// blockVec is blockPos's inverse: the vector at a kernel output position.
var blockVec = func() (t [blockVecs]uint8) {
	for v := range blockVecs {
		t[blockPos(v)] = uint8(v)
	}
	return t
}()

// scanTable is a query's quantized tables in the layouts the kernels read:
// lut (quantizeTable's) for Go and AVX2, wide as well for AVX-512.
type scanTable struct{ lut, wide []byte }

// scanConsts are the per-query numbers of the kernel's bound: for a block
// sum S and a vector's factors (scale, err), the vector is a candidate when
// scale·(S·delta + offset) + err·eps > threshold.
type scanConsts struct {
	delta, offset, eps, threshold float32
}

// fastScanGeneric is the kernel in Go: for each of blocks blocks of codes
// (pairs code bytes per vector, 32·pairs bytes per block) and factors (64
// per block), it sets masks[b] bit p when the vector at output position p
// is a candidate, and vals[32b+p] to the vector's bound, which it compared
// with the threshold: a higher threshold later keeps the vectors whose
// bound exceeds it, as a scan with it would have. lut holds 32 bytes per
// code byte: the 16 quantized partial sums of its low half byte, then of its
// high half byte. Its arithmetic is the assembly's, operation for
// operation, so the masks and bounds are the same bits.
func fastScanGeneric(codes []byte, factors []float32, blocks, pairs int, lut []byte, c *scanConsts, masks []uint32, vals []float32) {
	for b := range blocks {
		code := codes[b*blockVecs*pairs : (b+1)*blockVecs*pairs]
		f := factors[b*2*blockVecs : (b+1)*2*blockVecs]
		var sums [blockVecs]uint16
		for p := range pairs {
			lo, hi := lut[p*32:p*32+16], lut[p*32+16:p*32+32]
			for v, x := range code[p*blockVecs : (p+1)*blockVecs] {
				sums[v] += uint16(lo[x&15]) + uint16(hi[x>>4])
			}
		}
		var m uint32
		for pos := range blockVecs {
			s := float32(sums[blockVec[pos]])
			t := float32(s * c.delta)
			t = float32(t + c.offset)
			t = float32(f[pos] * t)
			e := float32(f[blockVecs+pos] * c.eps)
			vals[b*blockVecs+pos] = float32(t + e)
			if float32(t+e) > c.threshold {
				m |= 1 << pos
			}
		}
		masks[b] = m
	}
}

// quantizeTable fills lut (32 bytes per code byte) for the rotated query q
// and returns delta and offset such that, for any code, Σ±q_j (+ where the
// bit is set) ≤ S·delta + offset, S being the sum of the code's table
// entries: offset holds the quantization's worst case, what each table's
// rounding takes off at most (half a step or less).
func quantizeTable(q []float32, pairs int, lut []byte) (delta, bound float64) {
	nib := 2 * pairs
	var tables [16]float64
	maxRange, sumRange, sumMin, offset := 0.0, 0.0, 0.0, 0.0
	for m := range nib {
		var abs float64
		for b := range 4 {
			if j := 4*m + b; j < len(q) {
				abs += math.Abs(float64(q[j]))
			}
		}
		maxRange = max(maxRange, 2*abs)
		sumRange += 2 * abs
		sumMin -= abs
	}
	// Each entry fits a byte, and every sum of one entry per half byte
	// fits 16 bits even after rounding up by half a step each.
	delta = max(maxRange/255, sumRange/float64(65535-nib))
	if delta == 0 {
		delta = 1 // a query of zeros: every entry is 0 and exact
	}
	for m := range nib {
		var qs [4]float64
		var low float64
		for b := range 4 {
			if j := 4*m + b; j < len(q) {
				qs[b] = float64(q[j])
				low -= math.Abs(qs[b])
			}
		}
		tables[0] = -qs[0] - qs[1] - qs[2] - qs[3]
		for v := 1; v < 16; v++ {
			tables[v] = tables[v&(v-1)] + 2*qs[bits.TrailingZeros8(uint8(v))]
		}
		t := lut[(m/2)*32+(m%2)*16 : (m/2)*32+(m%2)*16+16]
		under := 0.0 // how far the table's entries fall short at most
		for v, x := range tables {
			t[v] = uint8(min(255, max(0, math.Round((x-low)/delta))))
			under = max(under, x-low-float64(t[v])*delta)
		}
		offset += under
	}
	return delta, sumMin + offset
}
