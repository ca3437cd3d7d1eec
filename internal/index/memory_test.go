package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

// What the engine costs in memory while it is built and saved: the bounds
// behind `toolport index add`'s peak (SECURITY.md, "Index build").

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// allocatedBy is how many bytes fn allocates.
func allocatedBy(fn func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// memoryDocs are n documents of lower-case text (which the analyser's
// lower-casing leaves as it is, so its terms are substrings of the text),
// each of 40 distinct words: 38 shared by every document and 2 of its own.
// repeat writes the shared words that many times, so that documents of
// repeat 1 and 50 have the same terms and postings and differ only in the
// length of their text.
func memoryDocs(n, repeat int) []Document {
	shared := make([]string, 38)
	for i := range shared {
		shared[i] = fmt.Sprintf("word%02dx", i)
	}
	body := strings.Repeat(strings.Join(shared, " ")+" ", repeat)
	docs := make([]Document, n)
	for i := range docs {
		docs[i] = Document{ID: fmt.Sprintf("D%06d", i), Fields: Fields{
			Title:          fmt.Sprintf("own%06da own%06db", i, i),
			Interpretation: body,
		}, Vector: []float32{float32(i%7 + 1), float32(i%5 + 1), 1}}
	}
	return docs
}

// TestBulkAddHoldsNoText: what an engine keeps per document is its postings
// and vector, not its text. The analyser's terms are substrings of the text,
// and a term kept as the document gave it (in a per-document term list, or
// as a map key, which assignment replaces) held the whole text alive: an
// index of long lyrics kept every lyric.
func TestBulkAddHoldsNoText(t *testing.T) {
	const n = 2000
	held := map[int]uint64{}
	for _, repeat := range []int{1, 50} {
		docs := memoryDocs(n, repeat)
		textBytes := len(docs[0].Interpretation) * n
		base := liveHeap()
		e := NewEngine(&fakeEmbedder{})
		for start := 0; start < n; start += 256 {
			batch := make([]Document, 0, 256)
			for _, d := range docs[start:min(start+256, n)] {
				// A copy of the text, as a store scan hands each record
				// over in strings of its own.
				d.Interpretation = strings.Clone(d.Interpretation)
				batch = append(batch, d)
			}
			if err := e.Add(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
		}
		held[repeat] = liveHeap() - base
		runtime.KeepAlive(e)
		t.Logf("text of %d bytes a document (%d MB in all): the engine holds %d bytes a document",
			textBytes/n, textBytes>>20, held[repeat]/n)
	}
	if held[50] > held[1]+held[1]/4 {
		t.Errorf("an engine of the same terms holds %d bytes with text 50 times longer, %d with the short text: it keeps the text",
			held[50], held[1])
	}
}

// TestBulkAddHoldsNoTermLists: an index built by Add keeps no list of each
// document's terms until a removal or feedback needs one: per document that
// list cost 20 bytes a term, more than the postings (8).
func TestBulkAddHoldsNoTermLists(t *testing.T) {
	x := NewBM25()
	for _, d := range memoryDocs(300, 1) {
		x.Add(d.ID, d.Fields)
	}
	if x.terms != nil || x.tfs != nil {
		t.Fatalf("term lists kept for %d documents after adding only", len(x.terms))
	}
}

// TestTermListsLaidOutOnDemand: removals, replacements and feedback after a
// bulk add see the same index as one built without them.
func TestTermListsLaidOutOnDemand(t *testing.T) {
	docs := memoryDocs(50, 1)
	got := NewBM25()
	for _, d := range docs {
		got.Add(d.ID, d.Fields)
	}
	got.Remove(docs[3].ID)                                                       // lays the lists out
	got.Add(docs[7].ID, Fields{Title: "replaced own000007a", Lyrics: "word03x"}) // replaces, kept up to date
	got.Add("NEW", Fields{Title: "own000003a fresh"})                            // a new slot (the freed one)
	got.Remove(docs[9].ID)

	want := NewBM25()
	for i, d := range docs {
		switch i {
		case 3, 9:
			continue
		case 7:
			d.Fields = Fields{Title: "replaced own000007a", Lyrics: "word03x"}
		}
		want.Add(d.ID, d.Fields)
	}
	want.Add("NEW", Fields{Title: "own000003a fresh"})

	for _, q := range []string{"word03x", "own000003a", "replaced fresh", "own000009b word11x", "own000007b"} {
		w := queryTerms(q)
		g, x := got.Scores(w), want.Scores(w)
		if len(g) != len(x) {
			t.Fatalf("%q: %d documents scored, want %d", q, len(g), len(x))
		}
		for id, s := range x {
			if d := g[id] - s; d > 1e-9 || d < -1e-9 {
				t.Errorf("%q: %s scores %v, want %v", q, id, g[id], s)
			}
		}
	}
	first := []Hit{{ID: docs[1].ID, Score: 2}, {ID: docs[7].ID, Score: 1}}
	p := FeedbackParams{Docs: 2, Terms: 5, Weight: 0.5}
	if g, x := got.feedbackTerms(queryTerms("word03x"), first, p), want.feedbackTerms(queryTerms("word03x"), first, p); fmt.Sprint(g) != fmt.Sprint(x) {
		t.Errorf("feedback terms %v, want %v", g, x)
	}
}

// snapshotEngines are engines of every shape a snapshot has: coded and
// not, with free slots, and with the word vectors query expansion lists.
func snapshotEngines(t *testing.T) map[string]*Engine {
	t.Helper()
	wv, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	withWords := NewEngine(wv)
	var docs []Document
	for i, d := range memoryDocs(300, 1) {
		d.Vector = nil
		d.Lyrics = []string{"calm acoustic guitar", "dark heavy drums", "happy summer song"}[i%3]
		docs = append(docs, d)
	}
	if err := withWords.Add(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	small := NewEngine(&fakeEmbedder{})
	if err := small.Add(context.Background(), memoryDocs(5, 1)); err != nil {
		t.Fatal(err)
	}
	return map[string]*Engine{"empty": NewEngine(&fakeEmbedder{}), "small": small,
		"coded, with removals": snapshotEngine(t), "word vectors": withWords}
}

// TestSnapshotSizeIsExact: SnapshotSize is the length written, so that the
// bytes can be allocated once, and WriteSnapshot writes MarshalSnapshot's
// bytes.
func TestSnapshotSizeIsExact(t *testing.T) {
	for name, e := range snapshotEngines(t) {
		t.Run(name, func(t *testing.T) {
			data := e.MarshalSnapshot()
			if got := e.SnapshotSize(); got != len(data) {
				t.Errorf("SnapshotSize %d, the snapshot has %d bytes", got, len(data))
			}
			var buf bytes.Buffer
			n, err := e.WriteSnapshot(&buf)
			if err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
				t.Errorf("WriteSnapshot: %d bytes, %v; differs from MarshalSnapshot: %v", n, err, !bytes.Equal(buf.Bytes(), data))
			}
			if _, err := LoadSnapshot(e.emb, data); err != nil {
				t.Errorf("LoadSnapshot: %v", err)
			}
		})
	}
}

// failingWriter fails after limit bytes.
type failingWriter struct{ limit, n int }

var errWriteFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		return 0, errWriteFull
	}
	w.n += len(p)
	return len(p), nil
}

func TestWriteSnapshotReportsWriteErrors(t *testing.T) {
	e := snapshotEngines(t)["word vectors"]
	if _, err := e.WriteSnapshot(&failingWriter{limit: 1000}); !errors.Is(err, errWriteFull) {
		t.Fatalf("got %v, want the writer's error", err)
	}
}

// TestSnapshotCostsItsSize: encoding a snapshot allocates its bytes once,
// plus the sorted term list (16 bytes a term) and a buffer, whatever the
// index's size. A buffer grown by doubling allocated about twice the
// snapshot, and held a copy being grown into while the old one was live.
func TestSnapshotCostsItsSize(t *testing.T) {
	e := NewEngine(&fakeEmbedder{})
	e.Reserve(20000)
	if err := e.Add(context.Background(), memoryDocs(20000, 1)); err != nil {
		t.Fatal(err)
	}
	var data []byte
	alloc := allocatedBy(func() { data = e.MarshalSnapshot() })
	terms := len(e.lex.postings)
	budget := uint64(len(data)) + 16*uint64(terms) + 1<<20
	t.Logf("snapshot of %d bytes, %d terms: %d bytes allocated (budget %d)", len(data), terms, alloc, budget)
	if alloc > budget {
		t.Errorf("encoding a snapshot of %d bytes allocated %d (budget %d)", len(data), alloc, budget)
	}
	stream := allocatedBy(func() {
		if _, err := e.WriteSnapshot(&failingWriter{limit: len(data)}); err != nil {
			t.Error(err)
		}
	})
	if streamBudget := 16*uint64(terms) + 1<<20; stream > streamBudget {
		t.Errorf("streaming a snapshot of %d bytes allocated %d (budget %d, no copy of it)", len(data), stream, streamBudget)
	}
}

// TestBulkAddAllocatesPerDocument: with the size reserved, adding the last
// batch of a large index allocates what adding the first did, per document:
// nothing is regrown or copied as the index fills.
func TestBulkAddAllocatesPerDocument(t *testing.T) {
	const n, batch = 40000, 256
	docs := memoryDocs(n, 1)
	e := NewEngine(&fakeEmbedder{})
	e.Reserve(n)
	first := allocatedBy(func() {
		if err := e.Add(context.Background(), docs[:batch]); err != nil {
			t.Fatal(err)
		}
	})
	if err := e.Add(context.Background(), docs[batch:n-batch]); err != nil {
		t.Fatal(err)
	}
	last := allocatedBy(func() {
		if err := e.Add(context.Background(), docs[n-batch:]); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("first batch %d bytes a document, last %d", first/batch, last/batch)
	if last > first+first/2 {
		t.Errorf("the last batch of %d documents allocated %d bytes, the first %d: adding grows with the index", batch, last, first)
	}
}
