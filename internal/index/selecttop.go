package index

import (
	"math/bits"
	"slices"
	"strings"
)

// selectTop reorders s so that s[:k] holds its k first elements by cmp,
// in order, and returns s[:min(k, len(s))]. cmp must be a total order (no two
// elements compare equal unless interchangeable), so the result is the same
// as sorting all of s and keeping k; it costs O(len(s) + k·log k) instead of
// O(len(s)·log len(s)), which matters when k is a small part of s: 10 fused
// hits of 2,000 candidates, 1,000 candidates of 5,500 tracks.
func selectTop[T any](s []T, k int, cmp func(a, b T) int) []T {
	s = selectSet(s, k, cmp)
	slices.SortFunc(s, cmp)
	return s
}

// selectSet is selectTop without the final sort: s[:k] holds the k first
// elements by cmp in no particular order. The hybrid's fusion needs only
// each side's set and its best and worst scores.
func selectSet[T any](s []T, k int, cmp func(a, b T) int) []T {
	if k <= 0 {
		return s[:0]
	}
	if k < len(s) {
		// Quickselect with a median-of-three pivot; past a depth bound (a
		// pathological order) the rest is sorted instead.
		lo, hi, depth := 0, len(s), 2*bits.Len(uint(len(s)))
		for hi-lo > 16 && depth > 0 {
			depth--
			p := partition(s[lo:hi], cmp) + lo
			switch {
			case p == k || p == k-1:
				lo, hi = 0, 0
			case p < k:
				lo = p + 1
			default:
				hi = p
			}
		}
		if hi > lo {
			slices.SortFunc(s[lo:hi], cmp)
		}
		s = s[:k]
	}
	return s
}

// partition moves s's median-of-three pivot to its final place by cmp and
// returns that place: everything before it is not after it, everything
// after not before.
func partition[T any](s []T, cmp func(a, b T) int) int {
	last, mid := len(s)-1, len(s)/2
	if cmp(s[mid], s[0]) < 0 {
		s[mid], s[0] = s[0], s[mid]
	}
	if cmp(s[last], s[0]) < 0 {
		s[last], s[0] = s[0], s[last]
	}
	if cmp(s[last], s[mid]) < 0 {
		s[last], s[mid] = s[mid], s[last]
	}
	// The median is s[mid]; it goes last for a Lomuto partition.
	s[mid], s[last] = s[last], s[mid]
	pivot := s[last]
	i := 0
	for j := range last {
		if cmp(s[j], pivot) < 0 {
			s[i], s[j] = s[j], s[i]
			i++
		}
	}
	s[i], s[last] = s[last], s[i]
	return i
}

// byScore orders hits best first, ties broken by id: the engine's result
// order.
func byScore(a, b Hit) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}
