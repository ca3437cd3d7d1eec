package embedding

// WordVectorSource is an embedder that has a vector per word, which search
// can use to find related words (query expansion). [WordVectors] is one;
// model-server embedders are not.
type WordVectorSource interface {
	// EachWord calls fn with every word of the vocabulary, most frequent
	// first, and its unit vector, until fn returns false. The vector is
	// shared: callers must not modify it.
	EachWord(fn func(word string, vec []float32) bool)
	// WordVector returns a word's unit vector (shared, not to be modified),
	// or nil when the word is not in the vocabulary.
	WordVector(word string) []float32
}

var _ WordVectorSource = (*WordVectors)(nil)

// unitVectors returns every row's unit vector, computing them once.
func (wv *WordVectors) unitVectors() []float32 {
	wv.unitsOnce.Do(func() {
		wv.units = make([]float32, len(wv.rows))
		for r := range len(wv.rows) / wv.dims {
			row, out := wv.rows[r*wv.dims:(r+1)*wv.dims], wv.units[r*wv.dims:(r+1)*wv.dims]
			for j, x := range row {
				out[j] = float32(int8(x))
			}
			normalize(out)
		}
	})
	return wv.units
}

// EachWord implements [WordVectorSource].
func (wv *WordVectors) EachWord(fn func(word string, vec []float32) bool) {
	units := wv.unitVectors()
	for i, w := range wv.words {
		if !fn(w, units[i*wv.dims:(i+1)*wv.dims:(i+1)*wv.dims]) {
			return
		}
	}
}

// WordVector implements [WordVectorSource].
func (wv *WordVectors) WordVector(word string) []float32 {
	r, ok := wv.index[word]
	if !ok {
		return nil
	}
	return wv.unitVectors()[int(r)*wv.dims : (int(r)+1)*wv.dims : (int(r)+1)*wv.dims]
}
