// Package wvasset is the layout of the offline embedder's word-vector asset,
// shared by the embedding package, which reads it in place, and the
// generator (internal/gen), which writes it; neither can import the other
// (the embedding package embeds what the generator writes).
//
// The asset is laid out so that it is used where it lies (the bytes
// compiled into the binary) with nothing built when it is loaded: no
// decompression, no map of its words, no copies. Layout, little-endian:
//
//	magic "TPWV2\n"
//	dims, n, slots                     u32 each
//	table    slots × u32               open-addressing hash of the words
//	offsets  (n+1) × u32               word r is words[offsets[r]:offsets[r+1]]
//	words    the words, concatenated, in row order (most frequent first)
//	rows     n × dims int8             row r is word r's vector, at any scale
//
// A table entry is 0 when empty, else the row plus one in its low
// [RowBits](n) bits and, above them, [Tag] of the word's hash, so that a
// probe rejects most other words without reading them. A word's probe
// starts at the slot its hash's low bits name and goes on to the next slot
// (linear probing) until the word or an empty slot.
package wvasset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

const (
	// Magic starts every asset.
	Magic = "TPWV2\n"
	// HeaderSize is the magic and the three counts.
	HeaderSize = len(Magic) + 12
	// MaxWords bounds n, so that a row and its hash tag share a u32 entry
	// with at least 7 bits of tag.
	MaxWords = 1 << 24
	// MaxDims bounds dims.
	MaxDims = 4096
)

// Hash is 64-bit FNV-1a: a hash fixed by its definition, unlike the
// runtime's, so that a table the generator wrote stays valid.
func Hash(w string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(w); i++ {
		h ^= uint64(w[i])
		h *= 1099511628211
	}
	return h
}

// RowBits is how many low bits of a table entry hold the row plus one.
func RowBits(n int) uint { return uint(bits.Len32(uint32(n))) }

// Tag is the part of hash h that a table entry keeps above the row.
func Tag(h uint64, rowBits uint) uint32 { return uint32(h>>32) >> rowBits }

// Slots is the table size for n words: a power of two with the load at most
// 4/5. With the tags, a probe at that load reads a cache line or two of the
// table and, almost always, only the word it finds; a sparser table would
// cost the binary 256 KB more for the 50,000 words.
func Slots(n int) int {
	slots := 2
	for slots*4 < n*5 {
		slots *= 2
	}
	return slots
}

// Append appends the asset for words (in frequency order, most frequent
// first: the embedder weighs words by rank) and their vectors, dims int8 per
// word in rows, to b.
func Append(b []byte, dims int, words []string, rows []int8) ([]byte, error) {
	n := len(words)
	switch {
	case dims <= 0 || dims > MaxDims:
		return nil, fmt.Errorf("wvasset: %d dimensions", dims)
	case n == 0 || n > MaxWords:
		return nil, fmt.Errorf("wvasset: %d words", n)
	case len(rows) != n*dims:
		return nil, fmt.Errorf("wvasset: %d values for %d words of %d dimensions", len(rows), n, dims)
	}
	slots, rb := Slots(n), RowBits(n)
	mask := uint32(slots - 1)
	table := make([]uint32, slots)
	seen := make(map[string]bool, n)
	size := 0
	for r, w := range words {
		if w == "" || seen[w] {
			return nil, fmt.Errorf("wvasset: word %d (%q) empty or repeated", r, w)
		}
		seen[w] = true
		if size += len(w); size > 1<<32-1 {
			return nil, errors.New("wvasset: the words are too long")
		}
		h := Hash(w)
		i := uint32(h) & mask
		for table[i] != 0 {
			i = (i + 1) & mask
		}
		table[i] = Tag(h, rb)<<rb | uint32(r+1)
	}
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(dims))
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, uint32(slots))
	for _, e := range table {
		b = binary.LittleEndian.AppendUint32(b, e)
	}
	off := 0
	b = binary.LittleEndian.AppendUint32(b, 0)
	for _, w := range words {
		off += len(w)
		b = binary.LittleEndian.AppendUint32(b, uint32(off))
	}
	for _, w := range words {
		b = append(b, w...)
	}
	for _, x := range rows {
		b = append(b, byte(x))
	}
	return b, nil
}
