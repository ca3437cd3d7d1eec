package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// scanCase is random input for the fast-scan kernel: codes, factors and a
// table quantized from a random query, with a threshold picked among the
// vectors' own bounds so that masks hold both set and clear bits.
type scanCase struct {
	codes   []byte
	factors []float32
	lut     []byte
	blocks  int
	pairs   int
	consts  scanConsts
}

func newScanCase(r *rand.Rand, blocks, pairs int) scanCase {
	c := scanCase{blocks: blocks, pairs: pairs}
	c.codes = make([]byte, blocks*blockVecs*pairs)
	for i := range c.codes {
		c.codes[i] = byte(r.Uint32())
	}
	c.factors = make([]float32, blocks*2*blockVecs)
	for i := range c.factors {
		c.factors[i] = float32(r.Float64() * 0.1)
	}
	q := make([]float32, 8*pairs-r.IntN(8))
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	normalize(q)
	c.lut = make([]byte, 32*pairs)
	delta, offset := quantizeTable(q, pairs, c.lut)
	c.consts = scanConsts{delta: float32(delta), offset: float32(offset), eps: 2}
	return c
}

// masks runs the kernel s with threshold t: the masks, then the bounds as
// bits (NaN is NaN).
func (c *scanCase) masks(s fastScanner, t float32) ([]uint32, []uint32) {
	m := make([]uint32, c.blocks)
	vals := make([]float32, c.blocks*blockVecs)
	k := c.consts
	k.threshold = t
	tab := s.table(c.lut, c.pairs)
	s.scan(c.codes, c.factors, c.blocks, c.pairs, &tab, &k, m, vals)
	bits := make([]uint32, len(vals))
	for i, v := range vals {
		bits[i] = math.Float32bits(v)
	}
	return m, bits
}

// namedScanner is one of the kernels.
type namedScanner struct {
	name string
	s    fastScanner
}

// machineScanners is every kernel this machine can run other than the
// pure-Go one: AVX2 and AVX-512 where it has them.
func machineScanners() []namedScanner {
	m := newFastScanner()
	var out []namedScanner
	if m.avx2 {
		out = append(out, namedScanner{"avx2", fastScanner{avx2: true}})
	}
	if m.avx512 {
		out = append(out, namedScanner{"avx512", m})
	}
	return out
}

// TestFastScanSameAsGeneric: the kernel this machine runs (AVX2 assembly on
// amd64) gives fastScanGeneric's masks to the bit, for code lengths from one
// byte to more than 384 dimensions' worth, block counts around the chunk
// size, and thresholds below, among and above the vectors' bounds.
func TestFastScanSameAsGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	machine := machineScanners()
	t.Logf("kernels: %v", machine)
	for _, pairs := range []int{1, 2, 3, 4, 5, 6, 7, 47, 48, 49, 50, 100} {
		for _, blocks := range []int{1, 2, 15, 16, 17} {
			c := newScanCase(r, blocks, pairs)
			for _, thr := range []float32{float32(math.Inf(-1)), -0.5, -0.05, 0, 0.02, 0.05, 0.1, float32(math.Inf(1))} {
				want, wantVals := c.masks(fastScanner{}, thr)
				for _, k := range machine {
					got, gotVals := c.masks(k.s, thr)
					for b := range want {
						if got[b] != want[b] {
							t.Fatalf("%s: pairs %d blocks %d threshold %v block %d: mask %032b, generic %032b", k.name, pairs, blocks, thr, b, got[b], want[b])
						}
					}
					if !slices.Equal(gotVals, wantVals) {
						t.Fatalf("%s: pairs %d blocks %d threshold %v: bounds differ from generic's", k.name, pairs, blocks, thr)
					}
				}
				// A higher threshold keeps the vectors whose bound
				// exceeds it: a later threshold applied to the bounds
				// is a scan with it.
				for _, higher := range []float32{thr, 0.03, 0.2} {
					if higher < thr {
						continue
					}
					again, _ := c.masks(fastScanner{}, higher)
					for b := range want {
						var m uint32
						for p := range blockVecs {
							if want[b]&(1<<p) != 0 && math.Float32frombits(wantVals[b*blockVecs+p]) > higher {
								m |= 1 << p
							}
						}
						if m != again[b] {
							t.Fatalf("pairs %d blocks %d threshold %v then %v block %d: bounds keep %032b, a scan %032b", pairs, blocks, thr, higher, b, m, again[b])
						}
					}
				}
			}
		}
	}
}

// FuzzFastScan: whatever the codes, tables and factors (including NaN,
// infinities and tables at the byte's limits), the machine's kernel and the
// generic one agree.
func FuzzFastScan(f *testing.F) {
	f.Add([]byte{0xff, 0x00, 0x0f, 0xf0}, uint8(1), uint8(1), float32(0.01), float32(-3), float32(0))
	f.Add([]byte("some code bytes and table entries"), uint8(48), uint8(2), float32(1), float32(0), float32(-1))
	f.Fuzz(func(t *testing.T, seed []byte, pairs, blocks uint8, delta, offset, thr float32) {
		p, b := 1+int(pairs)%64, 1+int(blocks)%4
		if len(seed) == 0 {
			seed = []byte{0}
		}
		c := scanCase{blocks: b, pairs: p, consts: scanConsts{delta: delta, offset: offset, eps: 2}}
		c.codes = make([]byte, b*blockVecs*p)
		for i := range c.codes {
			c.codes[i] = seed[i%len(seed)] ^ byte(i*131)
		}
		c.lut = make([]byte, 32*p)
		for i := range c.lut {
			c.lut[i] = seed[(i*7)%len(seed)] + byte(i)
		}
		c.factors = make([]float32, b*2*blockVecs)
		for i := range c.factors {
			c.factors[i] = float32(seed[(i*3)%len(seed)]) / 256
		}
		want, wantVals := c.masks(fastScanner{}, thr)
		for _, k := range machineScanners() {
			got, gotVals := c.masks(k.s, thr)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s: block %d: mask %032b, generic %032b", k.name, i, got[i], want[i])
				}
			}
			if !slices.Equal(gotVals, wantVals) {
				t.Fatalf("%s: bounds differ from generic's", k.name)
			}
		}
	})
}

// TestQuantizedTableBounds: for any code, the sum of its quantized table
// entries S bounds the exact Σ±q_j from above by S·delta + offset, and is
// no more than one step per half byte above it: the search never skips a
// vector for the quantization, and loses little to it.
func TestQuantizedTableBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	for _, dims := range []int{1, 5, 8, 100, 384, 385, 1024} {
		pairs := (dims + 7) / 8
		q := make([]float32, dims)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		normalize(q)
		lut := make([]byte, 32*pairs)
		delta, offset := quantizeTable(q, pairs, lut)
		for range 200 {
			code := make([]byte, pairs)
			exact := 0.0
			for j := range dims {
				if r.IntN(2) == 1 {
					code[j/8] |= 1 << (j % 8)
					exact += float64(q[j])
				} else {
					exact -= float64(q[j])
				}
			}
			s := 0
			for p, c := range code {
				s += int(lut[32*p+int(c&15)]) + int(lut[32*p+16+int(c>>4)])
			}
			if s > math.MaxUint16 {
				t.Fatalf("dims %d: sum %d overflows the kernel's 16 bits", dims, s)
			}
			upper := float64(s)*delta + offset
			if exact > upper+1e-9 || exact < upper-float64(2*pairs)*delta-1e-9 {
				t.Fatalf("dims %d: exact %v, bound %v, step %v × %d half bytes", dims, exact, upper, delta, 2*pairs)
			}
		}
	}
}

// TestCodesFollowEdits: after adds, replacements and removals that move
// slots within and across blocks, every slot's code and factors are those a
// fresh encoding of its vector gives, and the search over them still finds
// each vector first for itself.
func TestCodesFollowEdits(t *testing.T) {
	const dims = 20 // not a multiple of 8: a partial last code byte
	vecs := randomVectors(300, dims, 23)
	x := NewVectorIndex(dims)
	x.SetExactBelow(0)
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	if err := x.AddBatch(ids, vecs[:200]); err != nil {
		t.Fatal(err)
	}
	for i := 200; i < 260; i++ { // below the re-centring size: coded one by one
		if err := x.Add(fmt.Sprint(i), vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{0, 31, 32, 100, 259, 258, 5} {
		if !x.Remove(fmt.Sprint(i)) {
			t.Fatalf("Remove %d", i)
		}
	}
	if err := x.Add("7", vecs[299]); err != nil { // a replacement
		t.Fatal(err)
	}
	x.mu.RLock()
	fresh := NewVectorIndex(dims)
	fresh.center = x.center
	fresh.vecs = x.vecs
	fresh.codes = make([]byte, len(x.codes))
	fresh.factors = make([]float32, len(x.factors))
	buf := make([]float32, dims)
	for s := range x.ids {
		fresh.encode(s, buf)
		got, stride := x.codeBytes(s)
		want, _ := fresh.codeBytes(s)
		for p := range x.pairs {
			if got[p*stride] != want[p*stride] {
				t.Fatalf("slot %d (%s) byte %d: %08b, fresh %08b", s, x.ids[s], p, got[p*stride], want[p*stride])
			}
		}
		gs, gb := x.factorsOf(s)
		ws, wb := fresh.factorsOf(s)
		if *gs != *ws || *gb != *wb {
			t.Fatalf("slot %d factors %v %v, fresh %v %v", s, *gs, *gb, *ws, *wb)
		}
	}
	if want := (len(x.ids) + blockVecs - 1) / blockVecs * blockVecs * x.pairs; len(x.codes) != want {
		t.Errorf("%d code bytes for %d vectors, want %d", len(x.codes), len(x.ids), want)
	}
	x.mu.RUnlock()
	for i := 1; i < 258; i++ {
		id, v := fmt.Sprint(i), vecs[i]
		if i == 7 {
			v = vecs[299]
		}
		if !x.Has(id) {
			continue
		}
		if got := x.Search(v, 1, nil); len(got) != 1 || got[0].ID != id {
			t.Fatalf("Search(vector of %s) = %v", id, got)
		}
	}
}

// BenchmarkFastScan is the kernel alone over 1M 384-d codes (31,250 blocks),
// in chunks as the search calls it, against fastScanGeneric.
func BenchmarkFastScan(b *testing.B) {
	r := rand.New(rand.NewPCG(29, 31))
	c := newScanCase(r, 31250, 48)
	masks := make([]uint32, scanChunk)
	vals := make([]float32, scanChunk*blockVecs)
	for _, k := range append(machineScanners(), namedScanner{"generic", fastScanner{}}) {
		b.Run(k.name, func(b *testing.B) {
			tab := k.s.table(c.lut, c.pairs)
			consts := c.consts
			consts.threshold = 1
			for b.Loop() {
				for b0 := 0; b0 < c.blocks; b0 += scanChunk {
					step := min(scanChunk, c.blocks-b0)
					k.s.scan(c.codes[b0*blockVecs*c.pairs:], c.factors[b0*2*blockVecs:], step, c.pairs, &tab, &consts, masks[:step], vals)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/1M")
		})
	}
}

// BenchmarkFastScanResident separates the kernels' memory from their
// arithmetic: 1M vectors' worth of scanning over codes that fit L1 (16
// blocks, 24 KB), L2 (160 blocks, 240 KB) and none (31,250 blocks, 48 MB),
// by each kernel this machine has, and the floor: a plain streaming read of
// what the scan reads at 1M vectors (56 MB of codes and factors, summed as
// uint64s). In interleaved rounds, reported as the thread's CPU ns per
// vector, median (min–max) over the rounds. Run with -benchtime 1x -cpu 1.
func BenchmarkFastScanResident(b *testing.B) {
	const rounds, vectors = 7, 1_000_000
	r := rand.New(rand.NewPCG(29, 31))
	c := newScanCase(r, 31250, 48)
	stream := make([]uint64, vectors*(48+8)/8)
	for i := range stream {
		stream[i] = r.Uint64()
	}
	type variant struct {
		name string
		run  func() int // vectors scanned
	}
	var variants []variant
	masks := make([]uint32, scanChunk)
	vals := make([]float32, scanChunk*blockVecs)
	for _, k := range machineScanners() {
		tab := k.s.table(c.lut, c.pairs)
		for _, blocks := range []int{16, 160, 31250} {
			variants = append(variants, variant{fmt.Sprintf("%s-%dblocks-", k.name, blocks), func() int {
				consts := c.consts
				consts.threshold = 1
				n := 0
				for ; n < vectors; n += blocks * blockVecs {
					for b0 := 0; b0 < blocks; b0 += scanChunk {
						step := min(scanChunk, blocks-b0)
						k.s.scan(c.codes[b0*blockVecs*c.pairs:], c.factors[b0*2*blockVecs:], step, c.pairs, &tab, &consts, masks[:step], vals)
					}
				}
				return n
			}})
		}
	}
	var sink uint64
	variants = append(variants, variant{"stream56MB-", func() int {
		sink += sumWords(stream)
		return vectors
	}})
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.name
	}
	interleavedCPU(b, rounds, names, "ns/vec", func(i int) float64 { return float64(variants[i].run()) })
	if sink == 1 {
		b.Log("unlikely sum") // keeps the streaming read
	}
}

// sumWords is the streaming read: four independent sums, so that the
// additions keep up with memory.
func sumWords(w []uint64) uint64 {
	var s0, s1, s2, s3 uint64
	for ; len(w) >= 4; w = w[4:] {
		s0 += w[0]
		s1 += w[1]
		s2 += w[2]
		s3 += w[3]
	}
	for _, x := range w {
		s0 += x
	}
	return s0 + s1 + s2 + s3
}
