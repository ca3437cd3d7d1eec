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
		units := make([]float32, len(wv.rows))
		for r := range wv.n {
			wv.unitRow(units[r*wv.dims:(r+1)*wv.dims], r)
		}
		wv.units.Store(&units)
	})
	return *wv.units.Load()
}

// builtUnits returns the unit vectors if unitVectors has made them, else nil.
func (wv *WordVectors) builtUnits() []float32 {
	if p := wv.units.Load(); p != nil {
		return *p
	}
	return nil
}

// unitRow writes row r's unit vector into out (dims long) and returns out.
func (wv *WordVectors) unitRow(out []float32, r int) []float32 {
	row := wv.rows[r*wv.dims : (r+1)*wv.dims]
	for j := range out {
		out[j] = float32(int8(row[j]))
	}
	normalize(out)
	return out
}

// EachWord implements [WordVectorSource].
func (wv *WordVectors) EachWord(fn func(word string, vec []float32) bool) {
	units := wv.unitVectors()
	for i := range wv.n {
		if !fn(wv.word(i), units[i*wv.dims:(i+1)*wv.dims:(i+1)*wv.dims]) {
			return
		}
	}
}

// WordVector implements [WordVectorSource]. Until something has walked the
// vocabulary, it computes the one row it is asked for: a search that looks up
// its query words does not build the unit vectors of all 50,000.
func (wv *WordVectors) WordVector(word string) []float32 {
	r := wv.row(word)
	if r < 0 {
		return nil
	}
	if units := wv.builtUnits(); units != nil {
		return units[r*wv.dims : (r+1)*wv.dims : (r+1)*wv.dims]
	}
	return wv.unitRow(make([]float32, wv.dims), r)
}
