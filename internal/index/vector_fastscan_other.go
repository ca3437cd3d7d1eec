//go:build !amd64

package index

// fastScanner is the kernel this machine runs: fastScanGeneric.
type fastScanner struct{ avx2, avx512 bool }

func newFastScanner() fastScanner { return fastScanner{} }

func (fastScanner) table(lut []byte, _ int) scanTable { return scanTable{lut: lut} }

func (fastScanner) scan(codes []byte, factors []float32, blocks, pairs int, t *scanTable, c *scanConsts, masks []uint32, vals []float32) {
	fastScanGeneric(codes, factors, blocks, pairs, t.lut, c, masks, vals)
}
