package index

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRefineDotSameAsGeneric: the kernel this machine runs (AVX2 assembly
// on amd64) gives refineDotGeneric's sums, for strides of one to 25 blocks
// of 16 (odd and even counts, the assembly's two paths) and integers at
// their extremes as well as random ones.
func TestRefineDotSameAsGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	machine := newFastScanner()
	t.Logf("AVX2 kernel: %v", machine.avx2)
	for _, stride := range []int{16, 32, 48, 64, 384, 400} {
		for trial := range 20 {
			q := make([]int16, stride)
			c := make([]int8, stride)
			// Extremes within the query's bound on Σ|q̂_j|.
			top := int64(min(refineQueryMax, refineQueryL1/stride))
			for j := range q {
				switch trial % 3 {
				case 0:
					q[j], c[j] = int16(top), 127
				case 1:
					q[j], c[j] = int16(-top), 127
					if j%2 == 1 {
						c[j] = -127
					}
				default:
					q[j] = int16(r.Int64N(2*top+1) - top)
					c[j] = int8(r.IntN(255) - 127)
				}
			}
			// The same codes as slot 0 of one row and slot 2 of three,
			// among random rows, and every slot of a batch.
			codes := make([]int8, 5*stride)
			for j := range codes {
				codes[j] = int8(r.IntN(255) - 127)
			}
			copy(codes[2*stride:], c)
			fac := make([]float32, 2*5)
			slots := []int32{2, 0, 4, 2, 1, 3, 3}
			got, want := make([]int32, len(slots)), make([]int32, len(slots))
			machine.refineDots(q, codes, fac, slots, got)
			refineDotsGeneric(q, codes, slots, want)
			if !slices.Equal(got, want) {
				t.Fatalf("stride %d, trial %d: kernel %v, generic %v", stride, trial, got, want)
			}
			if one := refineDotGeneric(q, c); got[0] != one || got[3] != one {
				t.Fatalf("stride %d, trial %d: slot 2 sums to %d, its codes %d", stride, trial, got[0], one)
			}
			for n := range len(slots) { // batches shorter than the prefetch distance
				part := make([]int32, n)
				machine.refineDots(q, codes, fac, slots[:n], part)
				if !slices.Equal(part, want[:n]) {
					t.Fatalf("stride %d, %d slots: kernel %v, generic %v", stride, n, part, want[:n])
				}
			}
		}
	}
}

// checkRefineBound fails t unless the second stage's bound for query q and
// vector v (both unit length, or zero) is at least their float32 cosine as
// the search computes it, and both kernels agree.
func checkRefineBound(t *testing.T, q, v []float32) {
	t.Helper()
	stride := refineStride(len(q))
	code := make([]int8, stride)
	scale, residual := refineCode(code, v)
	rq := newRefineQuery(q, stride)
	var l1 int64
	for _, x := range rq.ints {
		if x > refineQueryMax || x < -refineQueryMax {
			t.Fatalf("query integer %d out of range", x)
		}
		l1 += int64(max(x, -x))
	}
	if l1 > refineQueryL1 {
		t.Fatalf("query integers sum to %d in magnitude, more than %d", l1, refineQueryL1)
	}
	var sums [1]int32
	newFastScanner().refineDots(rq.ints, code, make([]float32, 2), []int32{0}, sums[:])
	sum := sums[0]
	if g := refineDotGeneric(rq.ints, code); sum != g {
		t.Fatalf("kernel %d, generic %d", sum, g)
	}
	var exact [1]float32
	dots(q, v, exact[:])
	if ub := rq.upper(sum, scale, residual); ub < exact[0] {
		t.Fatalf("bound %v below the cosine %v (scale %v, residual %v)", ub, exact[0], scale, residual)
	}
}

// TestRefineBound: the bound holds, tightly, for random unit vectors of the
// benchmark's length, and holds for vectors with one dominant component
// (the worst case of a per-vector step), zero vectors and lengths that are
// not a multiple of 16.
func TestRefineBound(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	var slack float64
	for _, dims := range []int{1, 3, 15, 17, 384, 1000} {
		for trial := range 200 {
			q, v := make([]float32, dims), make([]float32, dims)
			for j := range q {
				q[j], v[j] = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			if trial%4 == 1 {
				v[r.IntN(dims)] = 1000
			}
			if trial%50 == 2 {
				clear(v)
			}
			normalize(q)
			normalize(v)
			checkRefineBound(t, q, v)
			if dims == 384 && trial%4 != 1 && trial%50 != 2 {
				stride := refineStride(dims)
				code := make([]int8, stride)
				scale, residual := refineCode(code, v)
				rq := newRefineQuery(q, stride)
				slack = max(slack, float64(rq.upper(refineDotGeneric(rq.ints, code), scale, residual)-dot(q, v)))
			}
		}
	}
	// What makes the stage worth having: at 384 dimensions the bound of a
	// vector without a dominant component is within 0.02 of the cosine,
	// against ±0.07 for the one-bit codes' bound at DefaultErrorBound.
	t.Logf("largest bound − cosine at 384 dimensions, no dominant component: %.4f", slack)
	if slack > 0.02 {
		t.Errorf("the 8-bit bound is %.4f above the cosine, want ≤ 0.02", slack)
	}
}

// FuzzRefineBound: whatever the components (within float32, finite), the
// bound is never below the cosine and the kernels agree.
func FuzzRefineBound(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(make([]byte, 8*40))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 8
		if n == 0 || n > 2048 {
			return
		}
		q, v := make([]float32, n), make([]float32, n)
		for j := range n {
			a := math.Float32frombits(binary.LittleEndian.Uint32(data[8*j:]))
			b := math.Float32frombits(binary.LittleEndian.Uint32(data[8*j+4:]))
			if math.IsNaN(float64(a)) || math.IsInf(float64(a), 0) || math.IsNaN(float64(b)) || math.IsInf(float64(b), 0) {
				return
			}
			q[j], v[j] = a, b
		}
		if !normalize(q) {
			return // Search returns nothing for such a query
		}
		normalize(v)
		for _, x := range v {
			// normalize's float32 reciprocal overflows for a vector of
			// subnormal components; such a vector is not this stage's.
			if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
				return
			}
		}
		checkRefineBound(t, q, v)
	})
}

// TestSearchSameAsMain: on the same index, the search with the 8-bit stage
// returns exactly what main's search (every one-bit candidate rescored
// exactly, mainSearch) returns, ids and scores, with every kernel this
// machine has (AVX-512, AVX2) and the pure-Go ones, for uniform and clustered data, also after writes that replace, remove and add vectors; and it
// rescores far fewer vectors exactly. (On main, whose search rescored
// every candidate, the second condition fails.)
func TestSearchSameAsMain(t *testing.T) {
	const n, nq, dims, k = 20000, 40, 384, 10
	for _, g := range []struct {
		name     string
		generate func(n, queries, dims int, seed uint64) (vecs, qs [][]float32)
	}{{"uniform", uniform}, {"clustered", gaussianClusters}} {
		t.Run(g.name, func(t *testing.T) {
			vecs, qs := g.generate(n, nq, dims, 23)
			x := codedIndex(t, vecs)
			compare := func(stage string) {
				var estimated, exact, mainExact int
				for _, q := range qs {
					got, c := x.search(q, k, nil)
					want, r := mainSearch(x, q, k)
					if !slices.Equal(got, want) {
						t.Fatalf("%s: got %v, main's search %v", stage, got, want)
					}
					// The pure-Go kernels (other CPUs) and every
					// other kernel this machine has give the same.
					machine := x.scanner
					for _, other := range append(machineScanners(), namedScanner{"generic", fastScanner{}}) {
						x.scanner = other.s
						alt, ac := x.search(q, k, nil)
						x.scanner = machine
						if !slices.Equal(alt, got) || ac != c {
							t.Fatalf("%s: %s kernels give %v %+v, this machine's %v %+v", stage, other.name, alt, ac, got, c)
						}
					}
					estimated += c.estimated
					exact += c.exact
					mainExact += r
				}
				t.Logf("%s: per query %d passed the one-bit bound, %d rescored exactly (main: %d)", stage, estimated/nq, exact/nq, mainExact/nq)
				if estimated != mainExact {
					t.Errorf("%s: %d passed the one-bit bound, main rescored %d: the first stage changed", stage, estimated, mainExact)
				}
				if exact*5 > mainExact {
					t.Errorf("%s: %d rescored exactly, main %d: the 8-bit stage spared less than 4/5", stage, exact, mainExact)
				}
			}
			compare("built")
			// Replace some vectors with others' (a query's neighbours
			// move), remove some, add a few: the codes follow.
			for i := 0; i < n; i += 97 {
				if err := x.Add(fmt.Sprint(i), vecs[(i*31)%n]); err != nil {
					t.Fatal(err)
				}
			}
			for i := 5; i < n; i += 113 {
				x.Remove(fmt.Sprint(i))
			}
			for i, q := range qs[:5] {
				if err := x.Add(fmt.Sprint("q", i), q); err != nil {
					t.Fatal(err)
				}
			}
			compare("edited")
		})
	}
}

// TestDefaultErrorBound: on uniform vectors, the hardest case, the default
// error bound keeps recall@10 at 0.985 or more while it passes at most 4/5
// of the vectors the bound of 2 (main's default) passed to the second stage.
// (On main, whose default was 2, the second condition fails.)
func TestDefaultErrorBound(t *testing.T) {
	const n, nq, dims, k = 20000, 100, 384, 10
	vecs, qs := uniform(n, nq, dims, 5)
	x := codedIndex(t, vecs)
	var recall float64
	var passed, passed2 int
	for _, q := range qs {
		got, c := x.search(q, k, nil)
		recall += recallAt(got, x.SearchExact(q, k, nil))
		passed += c.estimated
	}
	x.SetErrorBound(2)
	for _, q := range qs {
		_, c := x.search(q, k, nil)
		passed2 += c.estimated
	}
	recall /= nq
	t.Logf("recall@10 %.4f, %d past the one-bit bound per query (%d at 2)", recall, passed/nq, passed2/nq)
	if recall < 0.985 {
		t.Errorf("recall@10 = %.4f at the default error bound, want ≥ 0.985", recall)
	}
	if passed*5 > passed2*4 {
		t.Errorf("%d past the one-bit bound at the default, %d at 2: want at most 4/5", passed, passed2)
	}
}

// BenchmarkRefineRandom is the second stage's memory alone, as a uniform 1M
// search meets it: the 8-bit kernel over 22,000 slots a query drawn at
// random from 1M 384-d codes (384 MB), ten queries a round (84 MB of codes
// read, more than the L3 holds), in batches of 11 in slot order (a scan
// chunk's candidates), from codes in huge pages (adviseHuge) and in
// ordinary ones, in interleaved rounds; the thread's CPU ns per candidate,
// median (min–max). Run with -benchtime 1x -cpu 1.
func BenchmarkRefineRandom(b *testing.B) {
	const n, stride, perRound, batch, rounds = 1_000_000, 384, 220_000, 11, 7
	r := rand.New(rand.NewPCG(41, 43))
	q := make([]int16, stride)
	for j := range q {
		q[j] = int16(r.IntN(2001) - 1000)
	}
	codes, fac := make([]int8, n*stride), make([]float32, 2*n)
	for j := range codes { // any values: the kernel's time does not depend on them
		codes[j] = int8(j * 131)
	}
	batches := []int{batch, 44, 220, perRound}
	slots := make([]int32, perRound)
	for i := range slots {
		slots[i] = int32(r.IntN(n))
	}
	for i := 0; i < len(slots); i += batch {
		slices.Sort(slots[i:min(i+batch, len(slots))])
	}
	s := newFastScanner()
	out := make([]int32, perRound)
	names := make([]string, len(batches))
	for i, bt := range batches {
		names[i] = fmt.Sprintf("batch%d-", bt)
	}
	interleavedCPU(b, rounds, names, "ns/cand", func(i int) float64 {
		for j := 0; j < len(slots); j += batches[i] {
			part := slots[j:min(j+batches[i], len(slots))]
			s.refineDots(q, codes, fac, part, out[:len(part)])
		}
		return perRound
	})
}
