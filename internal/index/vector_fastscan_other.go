//go:build !amd64

package index

// fastScanner is the kernel this machine runs: fastScanGeneric.
type fastScanner struct{ avx2 bool }

func newFastScanner() fastScanner { return fastScanner{} }

func (fastScanner) scan(codes []byte, factors []float32, blocks, pairs int, lut []byte, c *scanConsts, masks []uint32) {
	fastScanGeneric(codes, factors, blocks, pairs, lut, c, masks)
}
