package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/toolport/toolport/internal/embedding"
)

// An engine snapshot is the engine's built state, BM25 postings and vector
// codes included, so that a process can load an index it did not build
// (`toolport call semanticSearch` runs once and exits) without analysing
// every document and coding every vector again. Its layout, little-endian:
//
//	magic "TPIXSNAP", tag (uvarint length + bytes), then
//	BM25:   slots (uvarint); per slot its id ("" for a free slot) and length (f32);
//	        terms (uvarint); per term the term, its posting count (uvarint)
//	        and per posting the slot (uvarint) and weighted tf (f32)
//	vector: dims, n (uvarint); n ids; n×dims f32 (unit vectors); coded (byte);
//	        when coded: codedAt (uvarint), dims f32 centre, the codes and
//	        factors of ⌈n/32⌉ blocks of 32 vectors, the last one padded
//	        (vector_fastscan.go's layout): every block's 32×⌈dims/8⌉
//	        code bytes, then every block's 64 f32 factors
//	expansion: minDocs, count (uvarint); count words (uvarint length +
//	        bytes), in the embedder's vocabulary order: every word whose
//	        stem is a term of minDocs documents or more, that is every word
//	        query expansion can take a candidate from (expand.go); count is
//	        0 when the embedder has no word vectors
//	CRC-32C of all of the above (u32), against accidental damage: the
//	store is trusted, and a cryptographic hash of a 4 MB snapshot cost
//	more than the rest of the load.
//
// The tag ([Engine.SnapshotTag]) names what the content depends on besides
// the documents: this layout, the analyser and field weights (by their
// output on a probe document, so that a change to them is noticed without
// anyone remembering to bump a number), the rotation the codes use, and the
// embedder. A snapshot whose tag differs is refused, and the caller builds
// the engine from the documents instead.

// snapshotFormat is the layout version; bump it when the layout or the
// meaning of a stored field changes.
const snapshotFormat = 3

const snapshotMagic = "TPIXSNAP"

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// ErrSnapshot is returned for a snapshot that cannot be used: corrupt,
// truncated, or made by another version or for another embedder.
var ErrSnapshot = errors.New("index: unusable snapshot")

// snapshotProbe is analysed to fingerprint the analyser: it has stopwords,
// inflections, hyphenated compounds, digits, punctuation and non-ASCII text
// in every field.
var snapshotProbe = Fields{
	Title:          "Hip-Hop Lovers' Strumming (Live)",
	Artist:         "The Running Guitars & Los Niños",
	Album:          "Sessions of Happiness, Vol. 2",
	Interpretation: "A calm, flowing lo-fi track: played acoustic guitars, crooning vocals and 90s jazz-infused beats.",
	Lyrics:         "I'm running away, über café naïve — we danced all night 'til the morning lights",
}

// SnapshotTag identifies what a snapshot of this engine depends on besides
// its documents (see the layout above). Two engines with the same tag read
// each other's snapshots.
func (e *Engine) SnapshotTag() string {
	h := sha256.New()
	fmt.Fprintf(h, "format %d\nrotation %d %d\nembedder %q %d\n",
		snapshotFormat, rotationRounds, rotationSeed, e.emb.Name(), e.emb.Dimensions())
	tf, length := snapshotProbe.weightedTerms(e.lex.analyze)
	terms := make([]string, 0, len(tf))
	for t := range tf {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	for _, t := range terms {
		fmt.Fprintf(h, "%q %g\n", t, tf[t])
	}
	fmt.Fprintf(h, "length %g\n", length)
	probeExpansion(e.lex.analyze, h)
	return fmt.Sprintf("v%d-%s", snapshotFormat, hex.EncodeToString(h.Sum(nil)[:12]))
}

// MarshalSnapshot encodes the engine's state into one allocation of the
// snapshot's size (see [Engine.WriteSnapshot]).
func (e *Engine) MarshalSnapshot() []byte {
	w := &appendWriter{b: make([]byte, 0, e.SnapshotSize())}
	_, _ = e.WriteSnapshot(w) // an appendWriter does not fail
	return w.b
}

// WriteSnapshot writes the engine's state to out as [Engine.MarshalSnapshot]
// encodes it, through a buffer of 64 KiB: however large the index, writing
// its snapshot costs no copy of it. It holds each part's read lock while it
// writes that part, so searches go on meanwhile and writes wait; for a
// snapshot of one state, the caller keeps writers out between the parts
// (the music service holds its load lock). It returns the bytes written and
// out's first error.
func (e *Engine) WriteSnapshot(out io.Writer) (int64, error) {
	w := newSnapWriter(out)
	w.bytes([]byte(snapshotMagic))
	w.str(e.SnapshotTag())
	e.lex.appendSnapshot(w)
	e.vec.appendSnapshot(w)
	e.appendExpansion(w)
	w.flush()
	w.b = binary.LittleEndian.AppendUint32(w.b, w.crc)
	w.flush()
	return w.n, w.err
}

// SnapshotSize is the length of the snapshot [Engine.WriteSnapshot] would
// write now, computed without encoding it, so that a caller can allocate
// the bytes once. It is exact while the engine is not written to.
func (e *Engine) SnapshotSize() int {
	n := len(snapshotMagic) + strLen(e.SnapshotTag()) + e.lex.snapshotSize() + e.vec.snapshotSize()
	minDocs, words := e.expansionWords()
	n += uvarintLen(uint64(minDocs)) + uvarintLen(uint64(len(words)))
	for _, w := range words {
		n += strLen(w)
	}
	return n + 4 // the CRC
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func strLen(s string) int { return uvarintLen(uint64(len(s))) + len(s) }

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// LoadSnapshot returns the engine a snapshot made by
// [Engine.MarshalSnapshot] describes, searching with emb. Any damage, or a
// tag other than what an engine with emb has, gives an error wrapping
// [ErrSnapshot] and never a partial engine.
func LoadSnapshot(emb embedding.Embedder, data []byte) (*Engine, error) {
	e := NewEngine(emb)
	if len(data) < len(snapshotMagic)+4 {
		return nil, fmt.Errorf("%w: %d bytes", ErrSnapshot, len(data))
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli()) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrSnapshot)
	}
	if err := e.decodeSnapshot(body); err != nil {
		return nil, err
	}
	return e, nil
}

// decodeSnapshot fills the empty engine e from a snapshot without its
// checksum, validating every count and reference against what is there.
func (e *Engine) decodeSnapshot(body []byte) error {
	r := &snapReader{b: body}
	if magic := r.take(len(snapshotMagic)); string(magic) != snapshotMagic {
		return fmt.Errorf("%w: not a snapshot", ErrSnapshot)
	}
	if tag := r.str(); r.err == nil && tag != e.SnapshotTag() {
		return fmt.Errorf("%w: tag %q, want %q", ErrSnapshot, tag, e.SnapshotTag())
	}
	lex, err := decodeBM25(r)
	if err != nil {
		return err
	}
	vec, err := decodeVectorIndex(r, e.emb.Dimensions())
	if err != nil {
		return err
	}
	minDocs, words := r.uvarint(), make([]string, 0, r.count(1))
	for range cap(words) {
		words = append(words, r.str())
	}
	if r.err != nil {
		return r.err
	}
	if minDocs > math.MaxInt32 {
		return fmt.Errorf("%w: expansion minimum %d", ErrSnapshot, minDocs)
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrSnapshot, len(r.b))
	}
	// Both sides must hold the same documents, as Engine.Add keeps them.
	if len(lex.slot) != len(vec.ids) {
		return fmt.Errorf("%w: %d lexical and %d vector documents", ErrSnapshot, len(lex.slot), len(vec.ids))
	}
	for _, id := range vec.ids {
		if _, ok := lex.slot[id]; !ok {
			return fmt.Errorf("%w: %q has a vector but no text", ErrSnapshot, id)
		}
	}
	e.lex, e.vec = lex, vec
	return e.seedExpansion(int(minDocs), words)
}

// appendExpansion writes the words query expansion can take candidates
// from, with the minimum document count they were chosen for (the engine's
// current one).
func (e *Engine) appendExpansion(w *snapWriter) {
	minDocs, words := e.expansionWords()
	w.uvarint(uint64(minDocs))
	w.uvarint(uint64(len(words)))
	for _, word := range words {
		w.str(word)
	}
}

// expansionWords is what appendExpansion writes.
func (e *Engine) expansionWords() (minDocs int, words []string) {
	src, ok := e.emb.(embedding.WordVectorSource)
	minDocs = max(e.RankParams().Expand.MinDocs, 0)
	if ok {
		src.EachWord(func(word string, _ []float32) bool {
			if e.lex.docFreq(Stem(word)) >= max(minDocs, 1) {
				words = append(words, word)
			}
			return true
		})
	}
	return minDocs, words
}

// seedExpansion builds the expansion candidates for minDocs from words (see
// appendExpansion) instead of the whole vocabulary. Every word must be in
// the embedder's vocabulary.
func (e *Engine) seedExpansion(minDocs int, words []string) error {
	src, ok := e.emb.(embedding.WordVectorSource)
	if !ok || len(words) == 0 {
		return nil // built on first use, if ever
	}
	dims := e.emb.Dimensions()
	vocab := listedWords{words: words, vecs: make([]float32, 0, len(words)*dims), dims: dims}
	for _, w := range words {
		v := src.WordVector(w)
		if len(v) != dims {
			return fmt.Errorf("%w: expansion word %q is not in the vocabulary", ErrSnapshot, w)
		}
		vocab.vecs = append(vocab.vecs, v...)
	}
	e.exp.mu.Lock()
	defer e.exp.mu.Unlock()
	e.exp.cur = buildExpansionTerms(vocab, e.lex, minDocs)
	e.exp.built, e.exp.changed, e.exp.minDocs = time.Now(), false, minDocs
	return nil
}

// listedWords is a vocabulary of the words listed and their vectors (dims
// each, in one array).
type listedWords struct {
	words []string
	vecs  []float32
	dims  int
}

func (l listedWords) EachWord(fn func(word string, vec []float32) bool) {
	for i, w := range l.words {
		if !fn(w, l.vecs[i*l.dims:(i+1)*l.dims:(i+1)*l.dims]) {
			return
		}
	}
}

func (l listedWords) WordVector(word string) []float32 {
	if i := slices.Index(l.words, word); i >= 0 {
		return l.vecs[i*l.dims : (i+1)*l.dims : (i+1)*l.dims]
	}
	return nil
}

// probeExpansion writes to h the expansion candidates built from the probe
// document over a vocabulary of its own words (each with a vector naming
// it), so that a change to how candidates are chosen changes the tag.
func probeExpansion(analyze func(string) []string, h io.Writer) {
	lex := newBM25With(analyze)
	lex.Add("probe", snapshotProbe)
	f := snapshotProbe
	var words []string
	vecs := map[string][]float32{}
	for _, w := range embedding.Words(strings.Join([]string{f.Title, f.Artist, f.Album, f.Interpretation, f.Lyrics}, " ")) {
		if vecs[w] == nil {
			words = append(words, w)
			vecs[w] = []float32{float32(len(words)), 1}
		}
	}
	x := buildExpansionTerms(probeWords{words, vecs}, lex, 1)
	for i, t := range x.terms {
		fmt.Fprintf(h, "expand %q %d %v\n", t, x.docs[t], x.vecs[i*x.dims:(i+1)*x.dims])
	}
}

// probeWords is the probe's vocabulary.
type probeWords struct {
	words []string
	vecs  map[string][]float32
}

func (p probeWords) EachWord(fn func(word string, vec []float32) bool) {
	for _, w := range p.words {
		if !fn(w, p.vecs[w]) {
			return
		}
	}
}

func (p probeWords) WordVector(word string) []float32 { return p.vecs[word] }

func (x *BM25) appendSnapshot(w *snapWriter) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	w.uvarint(uint64(len(x.ids)))
	for s, id := range x.ids {
		w.str(id)
		w.f32(x.length[s])
	}
	terms := make([]string, 0, len(x.postings))
	for t := range x.postings {
		terms = append(terms, t)
	}
	slices.Sort(terms) // the same index gives the same bytes
	w.uvarint(uint64(len(terms)))
	for _, t := range terms {
		ps := x.postings[t]
		w.str(t)
		w.uvarint(uint64(len(ps)))
		for _, p := range ps {
			w.uvarint(uint64(p.doc))
			w.f32(p.tf)
		}
	}
}

// snapshotSize is the length of what appendSnapshot writes.
func (x *BM25) snapshotSize() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := uvarintLen(uint64(len(x.ids))) + uvarintLen(uint64(len(x.postings)))
	for _, id := range x.ids {
		n += strLen(id) + 4
	}
	for t, ps := range x.postings {
		n += strLen(t) + uvarintLen(uint64(len(ps))) + 4*len(ps)
		for _, p := range ps {
			n += uvarintLen(uint64(p.doc))
		}
	}
	return n
}

func decodeBM25(r *snapReader) (*BM25, error) {
	x := NewBM25()
	slots := r.count(5) // an empty id and a length take 5 bytes at least
	x.ids = make([]string, 0, slots)
	x.length = make([]float32, 0, slots)
	x.slot = make(map[string]int32, slots)
	for s := range slots {
		id, length := r.str(), r.f32()
		if r.err != nil {
			break
		}
		if math.IsNaN(float64(length)) || length < 0 || math.IsInf(float64(length), 0) {
			return nil, fmt.Errorf("%w: slot %d has length %v", ErrSnapshot, s, length)
		}
		x.ids = append(x.ids, id)
		x.length = append(x.length, length)
		if id == "" {
			x.free = append(x.free, int32(s))
			continue
		}
		if _, dup := x.slot[id]; dup {
			return nil, fmt.Errorf("%w: id %q twice", ErrSnapshot, id)
		}
		x.slot[id] = int32(s)
		x.total += float64(length)
	}
	nterms := r.count(2)
	x.postings = make(map[string][]posting, nterms)
	// Each slot's terms and their frequencies are laid out when first needed
	// (BM25.slotTerms): a search needs neither, and they were a third of
	// the decoding and 6.7 MB of the demo's.
	lastTerm := make([]int32, len(x.ids)) // 1 + the last term posted for a slot
	// Terms share a few large buffers, and postings lists slices of a few
	// large arrays (capped, so an Add that appends copies): 73,000 terms'
	// strings and lists were as many allocations.
	var strs stringArena
	var lists postingArena
	prev := ""
	for i := range nterms {
		t := strs.str(r)
		n := r.count(5)
		if r.err != nil {
			break
		}
		if t == "" || (i > 0 && t <= prev) {
			return nil, fmt.Errorf("%w: terms out of order at %q", ErrSnapshot, t)
		}
		prev = t
		ps := lists.make(n)
		// The postings are read from a local slice, the checks inline:
		// this loop runs once per posting (334,000 for the demo).
		b := r.b
		for j := range ps {
			var doc uint64
			switch {
			case len(b) >= 2 && b[0] >= 0x80 && b[1] < 0x80: // slots 128 to 16,383
				doc, b = uint64(b[0]&0x7f)|uint64(b[1])<<7, b[2:]
			case len(b) >= 1 && b[0] < 0x80:
				doc, b = uint64(b[0]), b[1:]
			default:
				v, k := binary.Uvarint(b)
				if k <= 0 {
					r.fail("number")
					return nil, r.err
				}
				doc, b = v, b[k:]
			}
			if len(b) < 4 {
				r.fail("data")
				return nil, r.err
			}
			tf := math.Float32frombits(binary.LittleEndian.Uint32(b))
			b = b[4:]
			if doc >= uint64(len(x.ids)) || x.ids[doc] == "" {
				return nil, fmt.Errorf("%w: posting of %q for slot %d", ErrSnapshot, t, doc)
			}
			if !(tf > 0) || math.IsInf(float64(tf), 0) {
				return nil, fmt.Errorf("%w: posting of %q has tf %v", ErrSnapshot, t, tf)
			}
			if lastTerm[doc] == int32(i+1) {
				return nil, fmt.Errorf("%w: %q posted twice for slot %d", ErrSnapshot, t, doc)
			}
			lastTerm[doc] = int32(i + 1)
			ps[j] = posting{doc: int32(doc), tf: tf}
		}
		r.b = b
		if len(ps) == 0 {
			return nil, fmt.Errorf("%w: term %q without postings", ErrSnapshot, t)
		}
		x.postings[t] = ps
	}
	if r.err != nil {
		return nil, r.err
	}
	return x, nil
}

func (x *VectorIndex) appendSnapshot(w *snapWriter) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	w.uvarint(uint64(x.dims))
	w.uvarint(uint64(len(x.ids)))
	for _, id := range x.ids {
		w.str(id)
	}
	w.f32s(x.vecs)
	if !x.coded {
		w.byte(0)
		return
	}
	w.byte(1)
	w.uvarint(uint64(x.codedAt))
	w.f32s(x.center)
	w.bytes(x.codes)
	w.f32s(x.factors)
}

// snapshotSize is the length of what appendSnapshot writes.
func (x *VectorIndex) snapshotSize() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := uvarintLen(uint64(x.dims)) + uvarintLen(uint64(len(x.ids))) + 4*len(x.vecs) + 1
	for _, id := range x.ids {
		n += strLen(id)
	}
	if x.coded {
		n += uvarintLen(uint64(x.codedAt)) + 4*len(x.center) + len(x.codes) + 4*len(x.factors)
	}
	return n
}

func decodeVectorIndex(r *snapReader, dims int) (*VectorIndex, error) {
	if d := r.uvarint(); r.err == nil && d != uint64(dims) {
		return nil, fmt.Errorf("%w: %d dimensions, want %d", ErrSnapshot, d, dims)
	}
	x := NewVectorIndex(dims)
	n := r.count(1 + 4*dims)
	x.ids = make([]string, 0, n)
	x.slot = make(map[string]int32, n)
	for range n {
		id := r.str()
		if r.err != nil {
			return nil, r.err
		}
		if _, dup := x.slot[id]; dup || id == "" {
			return nil, fmt.Errorf("%w: vector id %q empty or twice", ErrSnapshot, id)
		}
		x.slot[id] = int32(len(x.ids))
		x.ids = append(x.ids, id)
	}
	x.vecs = r.f32s(n * dims)
	if !allFinite(x.vecs) {
		return nil, fmt.Errorf("%w: a vector is not finite", ErrSnapshot)
	}
	if r.err == nil {
		x.refineAll() // derived from the vectors, not stored (vector_refine.go)
	}
	switch coded := r.take(1); {
	case r.err != nil:
		return nil, r.err
	case coded[0] == 0:
		x.maybeRecode() // codes are cheap next to analysis; an old snapshot may lack them
	case coded[0] == 1:
		x.codedAt = int(min(r.uvarint(), math.MaxInt32))
		x.center = r.f32s(dims)
		blocks := (n + blockVecs - 1) / blockVecs
		if raw := r.take(blocks * blockVecs * x.pairs); r.err == nil {
			x.codes = slices.Clone(raw)
		}
		x.factors = r.f32s(blocks * 2 * blockVecs)
		if r.err != nil {
			return nil, r.err
		}
		if !allFinite(x.center) || !allFinite(x.factors) {
			return nil, fmt.Errorf("%w: codes are not finite", ErrSnapshot)
		}
		if extra := dims % 8; extra != 0 { // bits past dims are always clear
			for b := range blocks {
				last := (b*x.pairs + x.pairs - 1) * blockVecs
				for _, c := range x.codes[last : last+blockVecs] {
					if c>>extra != 0 {
						return nil, fmt.Errorf("%w: code bits past the dimensions", ErrSnapshot)
					}
				}
			}
		}
		x.coded = true
	default:
		return nil, fmt.Errorf("%w: coded flag %d", ErrSnapshot, coded[0])
	}
	return x, r.err
}

// stringArena makes strings out of a few large buffers instead of one
// allocation each. Bytes a string points to are never written again:
// appends only fill the rest of the buffer, and a full buffer is left.
type stringArena struct{ buf []byte }

// str reads a string as snapReader.str does.
func (a *stringArena) str(r *snapReader) string {
	var p []byte
	if b := r.b; len(b) > 0 && b[0] < 0x80 && int(b[0]) < len(b) { // most: a length byte
		p, r.b = b[1:1+b[0]], b[1+b[0]:]
	} else {
		p = r.take(r.count(1))
	}
	if len(p) == 0 {
		return ""
	}
	if len(p) > cap(a.buf)-len(a.buf) {
		if len(p) > 1024 {
			return string(p)
		}
		a.buf = make([]byte, 0, 64<<10)
	}
	a.buf = append(a.buf, p...)
	return unsafe.String(&a.buf[len(a.buf)-len(p)], len(p))
}

// postingArena hands out postings lists from a few large arrays.
type postingArena struct{ free []posting }

// make returns a list of n zero postings whose capacity is n.
func (a *postingArena) make(n int) []posting {
	if n > len(a.free) {
		if n > 1024 {
			return make([]posting, n)
		}
		a.free = make([]posting, 16<<10)
	}
	ps := a.free[:n:n]
	a.free = a.free[n:]
	return ps
}

func allFinite(fs []float32) bool {
	for _, f := range fs {
		// All exponent bits set is an infinity or a NaN: one test per
		// number, over the demo's 550,000.
		if math.Float32bits(f)&0x7f800000 == 0x7f800000 {
			return false
		}
	}
	return true
}

// snapWriter writes a snapshot to out through a buffer of about
// snapFlushAt bytes, keeping the CRC-32C of what it wrote and how much: a
// snapshot of any size costs the buffer, not a copy of the index.
type snapWriter struct {
	b   []byte
	out io.Writer
	n   int64
	crc uint32
	err error
}

const snapFlushAt = 64 << 10

func newSnapWriter(out io.Writer) *snapWriter {
	return &snapWriter{b: make([]byte, 0, snapFlushAt+1024), out: out}
}

// flush hands the buffer to out; after an error, it only counts.
func (w *snapWriter) flush() {
	if len(w.b) == 0 {
		return
	}
	w.crc = crc32.Update(w.crc, castagnoli(), w.b)
	w.n += int64(len(w.b))
	if w.err == nil {
		_, w.err = w.out.Write(w.b)
	}
	w.b = w.b[:0]
}

// room flushes a full buffer; every write ends with it.
func (w *snapWriter) room() {
	if len(w.b) >= snapFlushAt {
		w.flush()
	}
}

func (w *snapWriter) bytes(p []byte) {
	for len(p) > 0 {
		k := min(len(p), snapFlushAt)
		w.b = append(w.b, p[:k]...)
		p = p[k:]
		w.room()
	}
}

func (w *snapWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	for len(s) > 0 {
		k := min(len(s), snapFlushAt)
		w.b = append(w.b, s[:k]...)
		s = s[k:]
		w.room()
	}
}

func (w *snapWriter) byte(c byte)      { w.b = append(w.b, c); w.room() }
func (w *snapWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v); w.room() }
func (w *snapWriter) f32(f float32) {
	w.b = binary.LittleEndian.AppendUint32(w.b, math.Float32bits(f))
	w.room()
}

func (w *snapWriter) f32s(fs []float32) {
	for len(fs) > 0 {
		k := min(len(fs), snapFlushAt/4)
		for _, f := range fs[:k] {
			w.b = binary.LittleEndian.AppendUint32(w.b, math.Float32bits(f))
		}
		fs = fs[k:]
		w.room()
	}
}

// snapReader reads a snapshot; the first failure sticks in err and every
// later read returns zero values, so decoders check err once per record.
// Counts are bounded by the bytes left, so a forged count cannot make a
// decoder allocate more than the snapshot's size allows.
type snapReader struct {
	b   []byte
	err error
}

func (r *snapReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated or malformed %s", ErrSnapshot, what)
	}
	r.b = nil
}

func (r *snapReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.fail("data")
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *snapReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) > 0 && r.b[0] < 0x80 { // most numbers: one byte
		v := uint64(r.b[0])
		r.b = r.b[1:]
		return v
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least minBytes bytes each.
func (r *snapReader) count(minBytes int) int {
	v := r.uvarint()
	if r.err == nil && v > uint64(len(r.b)/max(minBytes, 1)) {
		r.fail("count")
		return 0
	}
	return int(v)
}

func (r *snapReader) str() string {
	n := r.count(1)
	return string(r.take(n))
}

func (r *snapReader) f32() float32 {
	p := r.take(4)
	if p == nil {
		return 0
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(p))
}

func (r *snapReader) f32s(n int) []float32 {
	raw := r.take(4 * n)
	if raw == nil {
		return nil
	}
	out := make([]float32, n)
	if littleEndian() && n > 0 {
		// The layout is the machine's: one copy instead of 550,000
		// conversions for the demo's vectors.
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 4*n), raw)
		return out
	}
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// littleEndian reports whether the machine stores numbers as snapshots do.
func littleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }
