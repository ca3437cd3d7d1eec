package index

import "golang.org/x/sys/cpu"

// fastScanAVX2 is fastScanGeneric in AVX2 assembly; pairs must be at least 1.
//
//go:noescape
func fastScanAVX2(codes *byte, factors *float32, blocks int, pairs int, lut *byte, c *scanConsts, masks *uint32)

// fastScanner is the kernel this machine runs.
type fastScanner struct{ avx2 bool }

func newFastScanner() fastScanner { return fastScanner{avx2: cpu.X86.HasAVX2} }

// scan is fastScanGeneric, in assembly where the CPU has AVX2.
func (f fastScanner) scan(codes []byte, factors []float32, blocks, pairs int, lut []byte, c *scanConsts, masks []uint32) {
	if !f.avx2 || blocks == 0 || pairs == 0 {
		fastScanGeneric(codes, factors, blocks, pairs, lut, c, masks)
		return
	}
	// The slices hold what the assembly reads.
	_ = codes[blocks*blockVecs*pairs-1]
	_ = factors[blocks*2*blockVecs-1]
	_ = lut[32*pairs-1]
	_ = masks[blocks-1]
	fastScanAVX2(&codes[0], &factors[0], blocks, pairs, &lut[0], c, &masks[0])
}
