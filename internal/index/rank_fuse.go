package index

import (
	"math/bits"
	"slices"
)

// slotHit is a hit with the slot it came from in its index.
type slotHit struct {
	Hit
	slot int32
}

func bySlotHitScore(a, b slotHit) int { return byScore(a.Hit, b.Hit) }

// fuseScratch is what a dense fusion reuses between searches: a fused score
// per vector slot and whether the slot has one yet.
type fuseScratch struct {
	acc  []float64
	seen []bool
	hits []int32 // the slots with a score, in the order they got it
	out  []Hit   // the fused hits, before the k best are copied out
	sel  []float32
}

// hybridExact is the hybrid's vector pool and fusion over the vector index's
// slots instead of a map keyed by id (the map's hashing was most of the
// fusion's cost): the same scan and selection as pool, the same sums in the
// same order as fuse, so the same hits with the same scores. It reports false,
// having done nothing, where pool would not take the exact scan (a filter, a
// large coded index) or where a lexical hit has no vector, and the caller
// falls back to pool and fuse.
func (x *VectorIndex) hybridExact(query []float32, lex []slotHit, pool int, lexWeight float64, k int) ([]Hit, bool) {
	if len(query) != x.dims || pool <= 0 {
		return nil, false
	}
	q := make([]float32, len(query))
	copy(q, query)
	unit := normalize(q)

	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	if n >= x.exactBelow && n > pool && x.coded {
		return nil, false
	}
	fs, _ := x.fuse.Get().(*fuseScratch)
	if fs == nil {
		fs = new(fuseScratch)
	}
	defer x.fuse.Put(fs)
	if len(fs.acc) < n {
		fs.acc, fs.seen = make([]float64, n), make([]bool, n)
	}
	fs.hits = fs.hits[:0]
	defer func() {
		for _, s := range fs.hits {
			fs.acc[s], fs.seen[s] = 0, false
		}
	}()

	// The lexical side first, as fuse adds it first. Documents are added to
	// both indexes in the same order, so a lexical slot is usually the same
	// vector slot; the id map settles the rest.
	lo, span := scoreRange(len(lex), func(i int) float64 { return lex[i].Score })
	for _, h := range lex {
		s := h.slot
		if int(s) >= n || x.ids[s] != h.ID {
			var ok bool
			if s, ok = x.slot[h.ID]; !ok {
				return nil, false
			}
		}
		fs.add(s, lexWeight*normalised(h.Score, lo, span))
	}

	if unit {
		buf, _ := x.scratch.Get().(*scanScratch)
		if buf == nil {
			buf = new(scanScratch)
		}
		scores := slices.Grow(buf.scores[:0], n)[:n]
		dots(q, x.vecs[:n*x.dims], scores)
		fs.sel = slices.Grow(fs.sel[:0], n)[:n]
		top, ok := largestSlots(buf.all[:0], scores, fs.sel, pool)
		if !ok { // a NaN: leave the order to selectSet, as pool does
			top = slices.Grow(top[:0], n)[:n]
			for i, sc := range scores {
				top[i] = slotScore{int32(i), sc}
			}
			top = selectSet(top, pool, bySlotScore)
		}
		lo, span := scoreRange(len(top), func(i int) float64 { return float64(top[i].score) })
		for _, t := range top {
			fs.add(t.slot, (1-lexWeight)*normalised(float64(t.score), lo, span))
		}
		buf.scores, buf.all = scores[:0], top[:0]
		x.scratch.Put(buf)
	}

	all := slices.Grow(fs.out[:0], len(fs.hits))
	for _, s := range fs.hits {
		all = append(all, Hit{x.ids[s], fs.acc[s]})
	}
	out := append([]Hit{}, selectTop(all, k, byScore)...) // not nil when empty, as fuse's
	clear(all)                                            // the ids, for the collector
	fs.out = all[:0]
	return out, true
}

// add adds v to slot s's fused score.
func (fs *fuseScratch) add(s int32, v float64) {
	if !fs.seen[s] {
		fs.seen[s] = true
		fs.hits = append(fs.hits, s)
	}
	fs.acc[s] += v
}

// scoreRange is the lowest of n scores and the span to the highest, as
// addNormalised computes them.
func scoreRange(n int, score func(i int) float64) (lo, span float64) {
	if n == 0 {
		return 0, 0
	}
	hi, lo := score(0), score(0)
	for i := 1; i < n; i++ {
		hi, lo = max(hi, score(i)), min(lo, score(i))
	}
	return lo, hi - lo
}

// normalised is a score min-max normalised as addNormalised does it.
func normalised(score, lo, span float64) float64 {
	if span > 0 {
		return (score - lo) / span
	}
	return 1
}

// largestSlots appends to dst the k best (slot, score) pairs of scores by
// bySlotScore, in slot order: the set selectSet(…, k, bySlotScore) keeps,
// found by selecting the k-th largest score among plain floats (a third of
// the cost of selecting structs through a comparison function). tmp is
// scratch of len(scores). It reports false, with dst in any state, if
// scores hold a NaN, which orders nothing.
func largestSlots(dst []slotScore, scores, tmp []float32, k int) ([]slotScore, bool) {
	if k <= 0 {
		return dst, true
	}
	if k >= len(scores) {
		for i, s := range scores {
			if s != s {
				return dst, false
			}
			dst = append(dst, slotScore{int32(i), s})
		}
		return dst, true
	}
	copy(tmp, scores)
	t := nthLargest(tmp, k-1)
	above := 0
	for _, s := range scores {
		if s > t {
			above++
		} else if s != s {
			return dst, false
		}
	}
	// Of the scores equal to the k-th, the lowest slots go in, as bySlotScore
	// orders them.
	ties := k - above
	for i, s := range scores {
		if s > t || s == t && ties > 0 {
			if s == t {
				ties--
			}
			dst = append(dst, slotScore{int32(i), s})
		}
	}
	return dst, len(dst) == k
}

// nthLargest reorders s so that s[n] is what it would be were s sorted
// largest first, and returns it: Hoare's FIND with a median-of-three pivot,
// sorting what is left past a depth bound (a pathological order). s holds
// no NaN.
func nthLargest(s []float32, n int) float32 {
	lo, hi := 0, len(s)-1
	for depth := 2 * bits.Len(uint(len(s))); lo < hi; depth-- {
		if depth == 0 {
			slices.Sort(s[lo : hi+1])
			slices.Reverse(s[lo : hi+1])
			break
		}
		a, b, c := s[lo], s[lo+(hi-lo)/2], s[hi]
		p := max(min(a, b), min(max(a, b), c)) // the median of the three
		i, j := lo, hi
		for i <= j {
			for s[i] > p {
				i++
			}
			for s[j] < p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		if j < n {
			lo = i
		}
		if n < i {
			hi = j
		}
	}
	return s[n]
}
