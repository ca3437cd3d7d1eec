package index

import "golang.org/x/sys/cpu"

// fastScanAVX2 is fastScanGeneric in AVX2 assembly; pairs must be at least 1.
//
//go:noescape
func fastScanAVX2(codes *byte, factors *float32, blocks int, pairs int, lut *byte, c *scanConsts, masks *uint32, vals *float32)

// fastScanAVX512 is fastScanGeneric in AVX-512 assembly, reading the wide
// tables (wideTable); pairs must be at least 1.
//
//go:noescape
func fastScanAVX512(codes *byte, factors *float32, blocks int, pairs int, wide *byte, c *scanConsts, masks *uint32, vals *float32)

// fastScanner is the kernel this machine runs: AVX-512 (F and BW: byte
// shuffles and 16-bit sums on 64 bytes) over AVX2 over Go.
type fastScanner struct{ avx2, avx512 bool }

func newFastScanner() fastScanner {
	return fastScanner{
		avx2:   cpu.X86.HasAVX2,
		avx512: cpu.X86.HasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW,
	}
}

// table is a query's tables (quantizeTable's lut) in the layouts this
// scanner reads.
func (f fastScanner) table(lut []byte, pairs int) scanTable {
	t := scanTable{lut: lut}
	if f.avx512 {
		t.wide = wideTable(lut, pairs)
	}
	return t
}

// wideTable lays out lut for the AVX-512 kernel, which takes two code bytes
// of 32 vectors (64 bytes) a load and shuffles within 16-byte lanes: per two
// code bytes p, p+1, 128 bytes, the low half bytes' tables as
// [lo(p) lo(p) lo(p+1) lo(p+1)] then the high ones' likewise. For an odd
// count the last 128 bytes hold lo(p) and hi(p) twice, then zeros.
func wideTable(lut []byte, pairs int) []byte {
	w := make([]byte, (pairs+1)/2*128)
	for p := range pairs {
		at := p/2*128 + p%2*32
		lo, hi := lut[p*32:p*32+16], lut[p*32+16:p*32+32]
		copy(w[at:], lo)
		copy(w[at+16:], lo)
		copy(w[at+64:], hi)
		copy(w[at+80:], hi)
	}
	return w
}

// scan is fastScanGeneric, in assembly where the CPU has AVX2 or AVX-512.
func (f fastScanner) scan(codes []byte, factors []float32, blocks, pairs int, t *scanTable, c *scanConsts, masks []uint32, vals []float32) {
	if !f.avx2 || blocks == 0 || pairs == 0 {
		fastScanGeneric(codes, factors, blocks, pairs, t.lut, c, masks, vals)
		return
	}
	// The slices hold what the assembly reads.
	_ = codes[blocks*blockVecs*pairs-1]
	_ = factors[blocks*2*blockVecs-1]
	_ = masks[blocks-1]
	_ = vals[blocks*blockVecs-1]
	if f.avx512 {
		_ = t.wide[(pairs+1)/2*128-1]
		fastScanAVX512(&codes[0], &factors[0], blocks, pairs, &t.wide[0], c, &masks[0], &vals[0])
		return
	}
	_ = t.lut[32*pairs-1]
	fastScanAVX2(&codes[0], &factors[0], blocks, pairs, &t.lut[0], c, &masks[0], &vals[0])
}
