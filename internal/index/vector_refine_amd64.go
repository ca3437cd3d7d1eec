package index

// refineDotAVX2 is refineDotGeneric for n (a positive multiple of 16)
// 16-bit query integers at q and 8-bit codes at c.
//
//go:noescape
func refineDotAVX2(q *int16, c *int8, n int) int32

// refineDot is refineDotGeneric, in assembly where the CPU has AVX2 (the
// fast scan's test): its 32-bit sums are exact, so the result is the same.
func (f fastScanner) refineDot(q []int16, c []int8) int32 {
	if !f.avx2 || len(q) == 0 || len(q)%refineAlign != 0 {
		return refineDotGeneric(q, c)
	}
	_ = c[len(q)-1] // the codes are there
	return refineDotAVX2(&q[0], &c[0], len(q))
}
