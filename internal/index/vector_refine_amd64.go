package index

// refineDotsAVX2 is refineDotsGeneric for a stride (a positive multiple of
// 16) of 16-bit query integers at q and 8-bit codes at codes, n slots. It
// also prefetches each slot's two factors at fac, which the caller reads
// next.
//
//go:noescape
func refineDotsAVX2(q *int16, codes *int8, stride int, slots *int32, n int, out *int32, fac *float32)

// refineDots is refineDotsGeneric, in assembly where the CPU has AVX2 (the
// fast scan's test): its 32-bit sums are exact, so the results are the same.
// fac holds two factors per slot, which the assembly prefetches with the
// codes: the caller's bound reads them next, and each is a cache miss of
// its own at a random slot.
func (f fastScanner) refineDots(q []int16, codes []int8, fac []float32, slots []int32, out []int32) {
	stride := len(q)
	if !f.avx2 || stride == 0 || stride%refineAlign != 0 || len(slots) == 0 {
		refineDotsGeneric(q, codes, slots, out)
		return
	}
	_ = out[len(slots)-1]
	for _, s := range slots { // the codes and factors are there
		_ = codes[int(s)*stride+stride-1]
		_ = fac[2*int(s)+1]
	}
	refineDotsAVX2(&q[0], &codes[0], stride, &slots[0], len(slots), &out[0], &fac[0])
}

// prefetchRefineSlots asks for the codes (stride bytes at codes+slot·stride)
// and the two factors (at fac+8·slot) of n slots.
//
//go:noescape
func prefetchRefineSlots(codes *int8, stride int, slots *int32, n int, fac *float32)

// prefetchRefine asks memory for the second stage's codes and factors of
// slots, which a later refineDots reads. A prefetch never faults, and the
// slots are the caller's own, within codes.
func (fastScanner) prefetchRefine(codes []int8, fac []float32, stride int, slots []int32) {
	if len(slots) == 0 || len(codes) == 0 || len(fac) == 0 || stride == 0 {
		return
	}
	prefetchRefineSlots(&codes[0], stride, &slots[0], len(slots), &fac[0])
}
