package index

import (
	"math"
	"testing"
)

// BenchmarkIntermediateBound measures what a cheaper strict bound between
// the one-bit and 8-bit stages could save (issue 29, item 3.1): for 100k
// 384-d vectors, uniform and clustered, 20 queries, k = 10, the vectors
// that pass the one-bit bound at the search's final threshold, and the
// share of them that a strict Cauchy–Schwarz bound from a per-vector code of
// 4, 6 or 8 bits (scale max|v_j|/(2^(b−1)−1), stored residual norm) would
// reject, and the 8-bit code's high half bytes alone (the low ones bounded
// by ‖q‖·‖s·(l−7.5)‖), with the mean residual norms. In float64, the
// query unrounded: the figures are what such a stage would reject at best.
// Run with -benchtime 1x.
func BenchmarkIntermediateBound(b *testing.B) {
	for _, g := range []struct {
		name string
		gen  func(n, queries, dims int, seed uint64) (vecs, qs [][]float32)
	}{{"uniform", uniform}, {"clustered", gaussianClusters}} {
		b.Run(g.name, func(b *testing.B) {
			const n, nq, dims, k = 100000, 20, 384, 10
			vecs, qs := g.gen(n, nq, dims, 7)
			x := codedIndex(b, vecs)
			var cands, rejHigh int
			levels := []float64{7, 31, 127}
			rej := make([]int, len(levels))
			res := make([]float64, len(levels))
			for b.Loop() {
				for _, q := range qs {
					hits, _ := x.search(q, k, nil)
					q = append([]float32(nil), q...)
					normalize(q)
					thr := hits[k-1].Score
					qr := make([]float32, dims)
					x.rot.apply(qr, q)
					base := dot(qr, x.center) + boundSlack
					lut := make([]byte, 32*x.pairs)
					delta, offset := quantizeTable(qr, x.pairs, lut)
					c := scanConsts{delta: float32(delta), offset: float32(offset), eps: x.epsilon, threshold: float32(thr) - base}
					tab := x.scanner.table(lut, x.pairs)
					blocks := (n + blockVecs - 1) / blockVecs
					masks := make([]uint32, blocks)
					x.scanner.scan(x.codes, x.factors, blocks, x.pairs, &tab, &c, masks, make([]float32, blocks*blockVecs))
					for bl, m := range masks {
						for p := range blockVecs {
							i := bl*blockVecs + int(blockVec[p])
							if m&(1<<p) == 0 || i >= n {
								continue
							}
							cands++
							v := x.vecs[i*dims : (i+1)*dims]
							var top float64
							for _, f := range v {
								top = max(top, math.Abs(float64(f)))
							}
							for li, lv := range levels {
								s := top / lv
								var est, r2 float64
								for j, f := range v {
									cq := math.Round(float64(f) / s)
									est += float64(q[j]) * cq * s
									r2 += (float64(f) - cq*s) * (float64(f) - cq*s)
								}
								res[li] += math.Sqrt(r2)
								if est+math.Sqrt(r2) < thr {
									rej[li]++
								}
							}
							s := top / 127
							var est, l2, r2 float64
							for j, f := range v {
								cq := math.Round(float64(f) / s)
								h := math.Floor(cq / 16)
								l := cq - 16*h
								est += float64(q[j]) * (16*h + 7.5) * s
								l2 += (l - 7.5) * (l - 7.5) * s * s
								r2 += (float64(f) - cq*s) * (float64(f) - cq*s)
							}
							if est+math.Sqrt(l2)+math.Sqrt(r2) < thr {
								rejHigh++
							}
						}
					}
				}
			}
			b.ReportMetric(float64(cands)/float64(b.N*nq), "passed1bit/q")
			for li, lv := range levels {
				bitsName := map[float64]string{7: "4bit", 31: "6bit", 127: "8bit"}[lv]
				b.ReportMetric(float64(rej[li])/float64(cands), bitsName+"-rejects")
				b.ReportMetric(res[li]/float64(cands), bitsName+"-residual")
			}
			b.ReportMetric(float64(rejHigh)/float64(cands), "high-nibbles-rejects")
		})
	}
}
