package index

import "math"

// The second stage of a search. The one-bit codes' bound (vector.go) lets
// through every vector whose cosine could reach the k best within
// DefaultErrorBound (1.7) standard errors of a one-bit estimate, ±0.04 at
// 384 dimensions: on data
// whose neighbours barely stand out, tens of thousands of vectors at a
// million, each 1.5 KB of float32 read from memory for its exact cosine.
// Each vector is also kept as 8-bit integers, its own scale, and the length
// of what that rounding left out: scalar quantization with a per-vector
// step, the extended codes' idea in RaBitQ's sequel (Gao, Gou, Xu, Yang,
// Long and Wong, "Practical and Asymptotically Optimal Quantization of
// High-Dimensional Vectors in Euclidean Space for Approximate Nearest
// Neighbor Search", SIGMOD 2025: more bits per dimension for candidates the
// one-bit estimate cannot decide). A candidate's cosine is estimated from
// its 384 bytes with integer multiply-adds, and its exact cosine is read
// only when the estimate plus its error bound reaches the k best exact
// cosines found so far. The bound here is not statistical: by
// Cauchy–Schwarz the rounding of the vector moves the inner product by at
// most the rounding's length, and the query's rounding likewise, so this
// stage never drops a vector the exact check would have kept. Recall is
// the first stage's.
//
// A vector's codes depend on it alone (no centre, no rotation), so they
// follow every write at once and are rebuilt from the vectors when a
// snapshot is loaded.

const (
	// refineAlign is what refineStride rounds the code bytes per vector
	// up to: the kernel's 16 (the padding is zero and adds nothing).
	refineAlign = 16

	// refineSlack absorbs the float32 rounding of the exact cosine that
	// the estimate's bound is compared with: a float32 dot product of two
	// unit vectors of up to a few thousand dimensions is within
	// dims·2⁻²⁴ ≈ 2.3e-5 (384) of the real one.
	refineSlack = 1e-4

	// refineQueryMax bounds the query's 16-bit integers: with vector codes
	// in ±127, Σ|q̂_j·c_j| ≤ 127·Σ|q̂_j| must stay below 2³¹ for the
	// kernel's 32-bit sums, so the query's scale also keeps Σ|q̂_j| ≤
	// refineQueryL1.
	refineQueryMax = 32767
	refineQueryL1  = (math.MaxInt32 - 1) / 127
)

func refineStride(dims int) int { return (dims + refineAlign - 1) / refineAlign * refineAlign }

// refineCode writes v's 8-bit code into code (refineStride long, padding
// zeroed) and returns the scale s such that v ≈ s·code, and an upper bound
// on ‖v − s·code‖.
func refineCode(code []int8, v []float32) (scale, residual float32) {
	clear(code)
	var top float64
	for _, f := range v {
		top = max(top, math.Abs(float64(f)))
	}
	if top == 0 {
		return 0, 0
	}
	scale = float32(top / 127)
	s := float64(scale)
	var r2 float64
	for j, f := range v {
		c := max(-127, min(127, math.Round(float64(f)/s)))
		code[j] = int8(c)
		d := float64(f) - c*s
		r2 += d * d
	}
	// Rounded up, as a bound must be: float64's error here is far below
	// what the factor adds.
	return scale, float32(math.Sqrt(r2) * (1 + 1e-6))
}

// refineQuery is a query's 16-bit integer form: q ≈ scale·ints, and
// ‖q − scale·ints‖ ≤ residual, norm ≥ ‖scale·ints‖.
type refineQuery struct {
	ints            []int16 // refineStride long
	scale, residual float64
	norm            float64
}

// newRefineQuery rounds q (unit length) to integers with at most
// refineQueryMax in magnitude and refineQueryL1 in sum of magnitudes.
func newRefineQuery(q []float32, stride int) refineQuery {
	rq := refineQuery{ints: make([]int16, stride)}
	var top, l1 float64
	for _, f := range q {
		a := math.Abs(float64(f))
		top = max(top, a)
		l1 += a
	}
	if top == 0 {
		return rq
	}
	// Rounding adds at most half a unit per component to the sum of
	// magnitudes, hence the len(q) kept in reserve.
	rq.scale = max(top/refineQueryMax, l1/float64(refineQueryL1-len(q)))
	var r2, n2 float64
	for j, f := range q {
		c := max(-refineQueryMax, min(refineQueryMax, math.Round(float64(f)/rq.scale)))
		rq.ints[j] = int16(c)
		d := float64(f) - c*rq.scale
		r2 += d * d
		n2 += c * rq.scale * c * rq.scale
	}
	rq.residual = math.Sqrt(r2) * (1 + 1e-6)
	rq.norm = math.Sqrt(n2) * (1 + 1e-6)
	return rq
}

// upper is the most the cosine of the query with a vector can be, from the
// kernel's sum for the vector's code and the vector's scale and residual:
// ⟨q,v⟩ = ⟨q̂,v̂⟩ + ⟨q̂,v−v̂⟩ + ⟨q−q̂,v⟩, the last two at most ‖q̂‖·residual
// and ‖q−q̂‖·‖v‖ (v is unit length, within float32 rounding).
func (rq *refineQuery) upper(sum int32, scale, residual float32) float32 {
	est := float64(sum) * rq.scale * float64(scale)
	return float32(est + rq.norm*float64(residual) + rq.residual*(1+1e-5) + refineSlack)
}

// refineDotsGeneric is the kernel in Go: out[i] is the sum for slot
// slots[i], whose codes are codes[slots[i]·len(q):][:len(q)].
func refineDotsGeneric(q []int16, codes []int8, slots []int32, out []int32) {
	stride := len(q)
	for i, s := range slots {
		out[i] = refineDotGeneric(q, codes[int(s)*stride:int(s)*stride+stride])
	}
}

// refineDotGeneric is Σ q_j·c_j over the stride, exact in 32 bits by the
// query's bounds, so any order of additions gives the same.
func refineDotGeneric(q []int16, c []int8) int32 {
	c = c[:len(q)]
	var s int32
	for j, x := range q {
		s += int32(x) * int32(c[j])
	}
	return s
}

// refineSlot computes slot s's second-stage code from its vector; the
// caller holds the write lock.
func (x *VectorIndex) refineSlot(s int) {
	x.rfac[2*s], x.rfac[2*s+1] = refineCode(x.rcodes[s*x.rstride:(s+1)*x.rstride], x.vecs[s*x.dims:(s+1)*x.dims])
}

// refineAll computes every slot's second-stage code, for vectors that came
// without (a snapshot); the caller holds the write lock or the only
// reference.
func (x *VectorIndex) refineAll() {
	n := len(x.ids)
	x.rcodes = make([]int8, n*x.rstride)
	x.rfac = make([]float32, 2*n)
	for s := range n {
		x.refineSlot(s)
	}
}
