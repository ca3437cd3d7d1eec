package embedding

import (
	"errors"

	"github.com/toolport/toolport/internal/embedding/internal/wvasset"
)

// The word-vector asset's layout is described, and written, by package
// internal/wvasset; the embedder reads it in place.

var errAsset = errors.New("embedding: malformed word-vector asset")

// u32 reads the i-th little-endian u32 of s.
func u32(s string, i int) uint32 {
	s = s[4*i : 4*i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// parseWordVectors checks the asset's header and sizes and its word offsets
// (one pass over 4(n+1) bytes), and returns the embedder reading it in
// place. The table is not checked: a lookup validates what it reads, so a
// damaged table can make words unknown but cannot make a read go out of
// bounds or a probe loop forever.
func parseWordVectors(data string) (*WordVectors, error) {
	if len(data) < wvasset.HeaderSize || data[:len(wvasset.Magic)] != wvasset.Magic {
		return nil, errAsset
	}
	h := data[len(wvasset.Magic):wvasset.HeaderSize]
	dims, n, slots := int(u32(h, 0)), int(u32(h, 1)), int(u32(h, 2))
	if dims <= 0 || dims > wvasset.MaxDims || n <= 0 || n > wvasset.MaxWords ||
		slots < n || slots > 4*wvasset.MaxWords || slots&(slots-1) != 0 {
		return nil, errAsset
	}
	p := data[wvasset.HeaderSize:]
	if len(p) < 4*slots+4*(n+1) {
		return nil, errAsset
	}
	table, offsets := p[:4*slots], p[4*slots:4*slots+4*(n+1)]
	p = p[4*slots+4*(n+1):]
	if u32(offsets, 0) != 0 {
		return nil, errAsset
	}
	prev := uint32(0)
	for r := 1; r <= n; r++ {
		o := u32(offsets, r)
		if o < prev {
			return nil, errAsset
		}
		prev = o
	}
	if uint64(len(p)) != uint64(prev)+uint64(n)*uint64(dims) {
		return nil, errAsset
	}
	return &WordVectors{
		dims:    dims,
		n:       n,
		rowBits: wvasset.RowBits(n),
		mask:    uint32(slots - 1),
		table:   table,
		offsets: offsets,
		words:   p[:prev],
		rows:    p[prev:],
	}, nil
}

// word is row r's word, a substring of the asset.
func (wv *WordVectors) word(r int) string {
	return wv.words[u32(wv.offsets, r):u32(wv.offsets, r+1)]
}

// row returns w's row, or -1 when the vocabulary lacks it.
func (wv *WordVectors) row(w string) int {
	h := wvasset.Hash(w)
	tag, rowMask := wvasset.Tag(h, wv.rowBits), uint32(1)<<wv.rowBits-1
	i := uint32(h) & wv.mask
	for range wv.mask + 1 { // at most every slot, whatever the table holds
		e := u32(wv.table, int(i))
		if e == 0 {
			return -1
		}
		if e>>wv.rowBits == tag {
			if r := int(e&rowMask) - 1; r >= 0 && r < wv.n && wv.word(r) == w {
				return r
			}
		}
		i = (i + 1) & wv.mask
	}
	return -1
}
