//go:build !amd64

package index

// refineDot is refineDotGeneric.
func (fastScanner) refineDot(q []int16, c []int8) int32 { return refineDotGeneric(q, c) }
