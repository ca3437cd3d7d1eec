package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotsSameAsDot: the batched inner products of the exact scan are dot's
// to the bit, for row lengths with and without a remainder of four, row
// counts around the batch of four, and values from tiny to large (where a
// different order of additions would round differently).
func TestDotsSameAsDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, d := range []int{1, 3, 4, 8, 100, 384, 385} {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 33} {
			for _, scale := range []float64{1e-20, 1e-3, 1, 1e15} {
				q := make([]float32, d)
				vecs := make([]float32, d*n)
				for i := range q {
					q[i] = float32(r.NormFloat64() * scale)
				}
				for i := range vecs {
					vecs[i] = float32(r.NormFloat64())
				}
				got := make([]float32, n)
				dots(q, vecs, got)
				for j := range n {
					want := dot(q, vecs[j*d:(j+1)*d])
					if math.Float32bits(got[j]) != math.Float32bits(want) {
						t.Fatalf("d=%d n=%d scale=%g row %d: %v, dot gives %v", d, n, scale, j, got[j], want)
					}
				}
			}
		}
	}
}
