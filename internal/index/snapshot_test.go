package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

// snapshotEngine is an engine with enough documents for the coded vector
// path, some removed (free BM25 slots), some replaced.
func snapshotEngine(t testing.TB) *Engine {
	t.Helper()
	ctx := context.Background()
	e := NewEngine(&fakeEmbedder{})
	e.vec.SetExactBelow(0)
	words := []string{"red", "green", "blue", "crimson", "azure", "guitar", "strumming", "lo-fi", "jazz"}
	var docs []Document
	for i := range 300 {
		docs = append(docs, Document{ID: fmt.Sprintf("T%04d", i), Fields: Fields{
			Title:          words[i%len(words)] + " " + words[(i/3)%len(words)],
			Artist:         fmt.Sprintf("artist %d", i%17),
			Interpretation: words[(i*7)%len(words)] + " and " + words[(i*5)%len(words)] + " tones",
		}})
	}
	if err := e.Add(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i += 7 {
		e.Remove(fmt.Sprintf("T%04d", i))
	}
	if err := e.Add(ctx, []Document{{ID: "T0001", Fields: Fields{Title: "azure azure"}}}); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSnapshotRoundTrip(t *testing.T) {
	ctx := context.Background()
	e := snapshotEngine(t)
	data := e.MarshalSnapshot()
	got, err := LoadSnapshot(&fakeEmbedder{}, data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != e.Len() || got.lex.Len() != e.lex.Len() {
		t.Fatalf("Len %d/%d, want %d/%d", got.Len(), got.lex.Len(), e.Len(), e.lex.Len())
	}
	// Each slot's terms and frequencies (what removal and feedback walk) are
	// laid out on first need, then the same as the built engine's.
	if got.lex.terms != nil {
		t.Error("a loaded engine laid out each document's terms before any need")
	}
	got.lex.slotTerms()
	for s := range e.lex.ids {
		want, have := slotTermFreqs(e.lex, s), slotTermFreqs(got.lex, s)
		if !maps.Equal(want, have) {
			t.Fatalf("slot %d: terms %v, built %v", s, have, want)
		}
	}
	got.vec.SetExactBelow(0)
	for _, mode := range []Mode{Hybrid, Lexical, Semantic} {
		for _, q := range []string{"red guitar", "azure", "lo-fi jazz strumming", "artist 3", "nothing matches"} {
			// Every document, so that no cut-off depends on the last bits of
			// a sum (BM25 adds query terms in map order).
			want, err1 := e.SearchMode(ctx, mode, q, 400, nil)
			have, err2 := got.SearchMode(ctx, mode, q, 400, nil)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !sameHits(want, have) {
				t.Errorf("%v %q: loaded engine gives %v, built one %v", mode, q, have, want)
			}
		}
	}
	// Feedback reads each document's term frequencies, which a loaded
	// engine rebuilds from the postings.
	fb := DefaultRankParams()
	fb.Feedback = FeedbackParams{Docs: 5, Terms: 10, Weight: 0.3}
	e.SetRankParams(fb)
	got.SetRankParams(fb)
	for _, q := range []string{"red guitar", "lo-fi jazz strumming"} {
		want, err1 := e.SearchMode(ctx, Hybrid, q, 400, nil)
		have, err2 := got.SearchMode(ctx, Hybrid, q, 400, nil)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !sameHits(want, have) {
			t.Errorf("feedback, %q: loaded engine gives %v, built one %v", q, have, want)
		}
	}
	got.SetRankParams(DefaultRankParams())
	// The same engine encodes to the same bytes, and the loaded one stays
	// writable like a built one.
	if again := got.MarshalSnapshot(); !bytes.Equal(again, data) {
		t.Error("a loaded engine does not encode to the snapshot it came from")
	}
	if err := got.Add(ctx, []Document{{ID: "new", Fields: Fields{Title: "green"}}}); err != nil || !got.Remove("T0002") {
		t.Fatalf("writes after loading: %v", err)
	}
	if hits, _ := got.SearchMode(ctx, Lexical, "green", 300, nil); !slices.ContainsFunc(hits, func(h Hit) bool { return h.ID == "new" }) {
		t.Error("document added after loading not found")
	}
}

// slotTermFreqs is slot s's terms and their frequencies.
func slotTermFreqs(x *BM25, s int) map[string]float32 {
	out := map[string]float32{}
	for i, t := range x.terms[s] {
		out[t] = x.tfs[s][i]
	}
	return out
}

// TestSnapshotRemoveFirst removes documents from a loaded engine before
// anything else has laid out its documents' terms: the index must then
// answer as the built engine does after the same removals.
func TestSnapshotRemoveFirst(t *testing.T) {
	ctx := context.Background()
	e := snapshotEngine(t)
	got, err := LoadSnapshot(&fakeEmbedder{}, e.MarshalSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"T0002", "T0010"} {
		if !e.Remove(id) || !got.Remove(id) {
			t.Fatalf("%s not removed", id)
		}
	}
	for _, q := range []string{"red guitar", "azure", "lo-fi jazz strumming", "artist 2"} {
		want, err1 := e.SearchMode(ctx, Lexical, q, 400, nil)
		have, err2 := got.SearchMode(ctx, Lexical, q, 400, nil)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !sameHits(want, have) {
			t.Errorf("%q after removals: loaded engine gives %v, built one %v", q, have, want)
		}
	}
	if !bytes.Equal(got.MarshalSnapshot(), e.MarshalSnapshot()) {
		t.Error("after the same removals the loaded engine encodes differently from the built one")
	}
}

// sameHits reports whether two results hold the same ids with the same
// scores up to rounding.
func sameHits(a, b []Hit) bool {
	if len(a) != len(b) {
		return false
	}
	scores := map[string]float64{}
	for _, h := range a {
		scores[h.ID] = h.Score
	}
	for _, h := range b {
		s, ok := scores[h.ID]
		if !ok || math.Abs(s-h.Score) > 1e-9 {
			return false
		}
	}
	return true
}

// otherEmbedder is fakeEmbedder under another name.
type otherEmbedder struct{ fakeEmbedder }

func (*otherEmbedder) Name() string { return "other" }

func TestSnapshotRefused(t *testing.T) {
	data := snapshotEngine(t).MarshalSnapshot()
	resum := func(body []byte) []byte {
		return binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli()))
	}
	body := data[:len(data)-4]
	tests := []struct {
		name string
		data []byte
		emb  interface{ Name() string }
	}{
		{"empty", nil, nil},
		{"truncated", data[:len(data)/2], nil},
		{"one bit flipped", func() []byte { d := slices.Clone(data); d[len(d)/3] ^= 4; return d }(), nil},
		{"checksum of damaged content", resum(slices.Clone(body[:len(body)-9])), nil},
		{"other format or analyser", resum(bytes.Replace(slices.Clone(body), fmt.Appendf(nil, "v%d-", snapshotFormat), []byte("v9-"), 1)), nil},
		{"other embedder", data, &otherEmbedder{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *Engine
			var err error
			if tt.emb != nil {
				e, err = LoadSnapshot(&otherEmbedder{}, tt.data)
			} else {
				e, err = LoadSnapshot(&fakeEmbedder{}, tt.data)
			}
			if !errors.Is(err, ErrSnapshot) || e != nil {
				t.Errorf("LoadSnapshot = %v, %v; want ErrSnapshot and no engine", e, err)
			}
		})
	}
}

// TestSnapshotTagFollowsTheAnalyser checks that the tag is derived from
// what it guards: engines with different embedders differ, equal ones agree.
func TestSnapshotTagFollowsTheAnalyser(t *testing.T) {
	a, b := NewEngine(&fakeEmbedder{}).SnapshotTag(), NewEngine(&fakeEmbedder{}).SnapshotTag()
	if a != b {
		t.Errorf("tags of equal engines differ: %s, %s", a, b)
	}
	if c := NewEngine(&otherEmbedder{}).SnapshotTag(); c == a {
		t.Error("the tag ignores the embedder")
	}
	tf, _ := snapshotProbe.weightedTerms(Terms)
	for _, want := range []string{"strum", "lo", "fi", "lo-fi", "guitar", "hip-hop"} {
		if tf[want] == 0 {
			t.Errorf("the probe document does not exercise %q (terms %v)", want, tf)
		}
	}
}

// FuzzSnapshot feeds damaged snapshots to the decoder past the checksum:
// it must refuse or accept, never panic, and what it accepts must search.
func FuzzSnapshot(f *testing.F) {
	data := snapshotEngine(f).MarshalSnapshot()
	f.Add(data[:len(data)-4])
	f.Add([]byte(snapshotMagic))
	small := NewEngine(&fakeEmbedder{})
	_ = small.Add(context.Background(), []Document{{ID: "a", Fields: Fields{Title: "red"}}})
	d := small.MarshalSnapshot()
	f.Add(d[:len(d)-4])
	f.Fuzz(func(t *testing.T, body []byte) {
		e := NewEngine(&fakeEmbedder{})
		if err := e.decodeSnapshot(body); err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("error %v does not wrap ErrSnapshot", err)
			}
			return
		}
		ctx := context.Background()
		e.vec.SetExactBelow(0)
		for _, mode := range []Mode{Hybrid, Lexical, Semantic} {
			if _, err := e.SearchMode(ctx, mode, "red green lo-fi", 5, nil); err != nil {
				t.Fatal(err)
			}
		}
		e.Remove("a")
		_ = e.Add(ctx, []Document{{ID: "b", Fields: Fields{Title: "blue"}}})
		// Removing every document leaves no posting behind: each slot's
		// term list agrees with the postings.
		for _, id := range slices.Clone(e.lex.ids) {
			if id != "" {
				e.Remove(id)
			}
		}
		if n := len(e.lex.postings); n != 0 {
			t.Fatalf("%d terms still posted after removing every document", n)
		}
	})
}

// A loaded engine's query expansion candidates, built from the words the
// snapshot lists, are those the whole vocabulary gives, and its searches
// rank as the built engine's do.
func TestSnapshotExpansionCandidates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the MusicCaps index")
	}
	ctx := context.Background()
	e, ds := buildMusicCaps(t)
	got, err := LoadSnapshot(e.emb, e.MarshalSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	src := e.emb.(embedding.WordVectorSource)
	p := e.RankParams().Expand
	want := buildExpansionTerms(src, e.lex, p.MinDocs)
	seeded := got.exp.cur
	if seeded == nil || got.exp.minDocs != p.MinDocs {
		t.Fatalf("no candidates seeded for minDocs %d", p.MinDocs)
	}
	if !slices.Equal(seeded.terms, want.terms) || !slices.Equal(seeded.vecs, want.vecs) ||
		!maps.Equal(seeded.docs, want.docs) || seeded.dims != want.dims {
		t.Fatalf("seeded %d candidate terms, the vocabulary gives %d (or their vectors differ)", len(seeded.terms), len(want.terms))
	}
	if wv, ok := e.emb.(*embedding.WordVectors); ok && wv != nil && len(want.terms) < 100 {
		t.Fatalf("only %d candidates: the check above proves little", len(want.terms))
	}
	for _, q := range ds.queries[:min(len(ds.queries), 40)] {
		a, err1 := e.Search(ctx, q.Text, 100, nil)
		b, err2 := got.Search(ctx, q.Text, 100, nil)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !sameHits(a, b) {
			t.Errorf("%q: loaded engine ranks %v, built %v", q.Text, head(b), head(a))
		}
	}
}

// The tag's expansion probe has candidates to show, several from one stem.
func TestSnapshotProbeExpands(t *testing.T) {
	var b strings.Builder
	probeExpansion(Terms, &b)
	if n := strings.Count(b.String(), "expand "); n < 10 {
		t.Errorf("the probe yields %d expansion candidates:\n%s", n, b.String())
	}
}
