//go:build !amd64

package index

// refineDots is refineDotsGeneric.
func (fastScanner) refineDots(q []int16, codes []int8, _ []float32, slots []int32, out []int32) {
	refineDotsGeneric(q, codes, slots, out)
}

// prefetchRefine does nothing: Go has no prefetch.
func (fastScanner) prefetchRefine(_ []int8, _ []float32, _ int, _ []int32) {}
