package index

import (
	"math"
	"math/rand/v2"
)

// rotation is a fixed pseudo-random orthogonal transform of vectors of one
// length: rounds of random sign flips, each followed by a normalised
// Walsh–Hadamard transform of a power-of-two block, alternately at the
// start and at the end of the vector so that blocks overlap when the length
// is not a power of two. Three rounds make every output depend on every
// input; it costs O(D log D) per vector where a dense random rotation costs
// O(D²). The codes' error bound assumes such a rotation: it spreads each
// vector's energy evenly over the dimensions, whatever the data.
//
// The signs come from a fixed seed, so every process builds the same
// rotation; saved codes depend on it (see snapshotFormat).
type rotation struct {
	dims, block int
	signs       [rotationRounds][]float32
}

const (
	rotationRounds = 3
	rotationSeed   = 0x7001_9047
)

func newRotation(dims int) rotation {
	r := rotation{dims: dims, block: 1}
	for r.block*2 <= dims {
		r.block *= 2
	}
	rng := rand.New(rand.NewPCG(rotationSeed, uint64(dims)))
	for i := range r.signs {
		r.signs[i] = make([]float32, dims)
		for j := range r.signs[i] {
			r.signs[i][j] = 1
			if rng.Uint64()&1 == 1 {
				r.signs[i][j] = -1
			}
		}
	}
	return r
}

// apply writes the rotation of src into dst (both dims long).
func (r *rotation) apply(dst, src []float32) {
	copy(dst, src)
	if r.dims == 0 {
		return
	}
	scale := float32(1 / math.Sqrt(float64(r.block)))
	for i, signs := range r.signs {
		for j, s := range signs {
			dst[j] *= s
		}
		off := 0
		if i%2 == 1 {
			off = r.dims - r.block
		}
		fwht(dst[off:off+r.block], scale)
	}
}

// fwht is the in-place Walsh–Hadamard transform of a power-of-two-long
// slice, scaled by scale (1/√len keeps it orthogonal).
func fwht(v []float32, scale float32) {
	n := len(v)
	for h := 1; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			a, b := v[i:i+h], v[i+h:i+2*h]
			for j := range a {
				a[j], b[j] = a[j]+b[j], a[j]-b[j]
			}
		}
	}
	for i := range v {
		v[i] *= scale
	}
}
