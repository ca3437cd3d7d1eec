package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"guitars", "guitar"}, {"ballads", "ballad"}, {"strumming", "strum"}, {"played", "play"},
		{"melodies", "melody"}, {"sadness", "sad"}, {"softly", "soft"}, {"bass", "bass"},
		{"chorus", "chorus"}, {"jazz", "jazz"}, {"thrilling", "thrill"}, {"song", "song"},
		{"is", "is"}, {"café", "café"}, {"speed", "speed"},
	}
	for _, tt := range tests {
		if got := Stem(tt.in); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTerms(t *testing.T) {
	got := Terms("The Lo-Fi recordings of the singers, with guitars!")
	want := []string{"lo", "fi", "lo-fi", "recording", "singer", "guitar"}
	if !slices.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"", "lo-fi hip-hop", "The singers' guitars", "\xff\xfe-", "ǅemal ĲSSEL", "--a--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range Terms(s) {
			if term == "" || !utf8.ValidString(term) || isStopword(term) && Stem(term) == term && len(term) > 3 {
				t.Fatalf("Terms(%q) produced %q", s, term)
			}
		}
	})
}

func TestBM25(t *testing.T) {
	x := NewBM25()
	x.Add("a", Fields{Title: "Piano Nocturne", Interpretation: "a calm solo piano piece"})
	x.Add("b", Fields{Title: "Thunder", Interpretation: "loud drums and distorted guitars, a piano in the back"})
	x.Add("c", Fields{Title: "Quiet", Interpretation: "ambient pads"})
	rank := func(q string) []string {
		var ids []string
		for _, h := range topHits(x.Scores(queryTerms(q)), 10, nil) {
			ids = append(ids, h.ID)
		}
		return ids
	}
	if got := rank("piano"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("piano: %v, want [a b] (title weight and shorter doc first)", got)
	}
	if got := rank("guitar drums"); !slices.Equal(got, []string{"b"}) {
		t.Errorf("guitar drums: %v, want [b] (stemmed match)", got)
	}
	if got := rank("the and of"); len(got) != 0 {
		t.Errorf("stopwords only: %v, want none", got)
	}
	if !x.Remove("a") || x.Remove("a") || x.Len() != 2 {
		t.Fatalf("Remove: wrong result or Len %d", x.Len())
	}
	if got := rank("piano"); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after removing a: %v, want [b]", got)
	}
	x.Add("b", Fields{Title: "Thunder", Interpretation: "ambient"}) // replace
	if got := rank("drums"); len(got) != 0 || x.Len() != 2 {
		t.Errorf("after re-adding b: drums → %v, Len %d", got, x.Len())
	}
	if got := rank("ambient"); !slices.Equal(got, []string{"b", "c"}) && !slices.Equal(got, []string{"c", "b"}) {
		t.Errorf("ambient: %v", got)
	}
}

func randomVectors(n, dims int, seed uint64) [][]float32 {
	vs, _ := clustered(n, 0, dims, seed)
	return vs
}

// TestVectorIndexRecall holds recall@10 against the exact answer at 0.98 or
// more on clustered and on uniformly random vectors. The uniform case is the
// hard one (neighbours barely stand out): the fixed-candidate search this
// index had before reached 0.867 on it at 100k vectors and 0.67 at 1M, and
// at 20k with its candidates scaled to the same share of the index it fails
// here too (the baseline row, which must stay below the bar for this test
// to mean anything).
func TestVectorIndexRecall(t *testing.T) {
	const n, nq, dims, k = 20000, 100, 384, 10
	tests := []struct {
		name     string
		generate func(n, queries, dims int, seed uint64) (vecs, qs [][]float32)
	}{
		{"clustered", clustered},
		{"uniform", uniform},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vecs, qs := tt.generate(n, nq, dims, 7)
			x := codedIndex(t, vecs)
			old := newHammingBaseline(x, 8000*n/100_000, 100)
			var recall, oldRecall float64
			for _, q := range qs {
				got, want := x.Search(q, k, nil), x.SearchExact(q, k, nil)
				if len(got) != k {
					t.Fatalf("got %d hits, want %d", len(got), k)
				}
				for i := 1; i < len(got); i++ {
					if got[i].Score > got[i-1].Score {
						t.Fatalf("hits not sorted: %v", got)
					}
				}
				for _, h := range got { // scores are exact cosines
					if c := float64(dot(q, vecs[atoi(h.ID)])); math.Abs(c-h.Score) > 1e-5 {
						t.Fatalf("score %v, cosine %v", h.Score, c)
					}
				}
				recall += recallAt(got, want)
				oldRecall += recallAt(old.search(q, k), want)
			}
			recall /= nq
			oldRecall /= nq
			t.Logf("recall@10 %.3f (fixed-candidate baseline %.3f)", recall, oldRecall)
			if recall < 0.98 {
				t.Errorf("recall@10 = %.3f, want ≥ 0.98", recall)
			}
			if tt.name == "uniform" && oldRecall >= 0.98 {
				t.Errorf("baseline recall@10 = %.3f: the uniform data no longer tells a fixed candidate count from a bound", oldRecall)
			}
		})
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func TestVectorIndexAddRemoveFilter(t *testing.T) {
	const dims = 8
	x := NewVectorIndex(dims)
	x.SetExactBelow(0) // use the codes on a small index
	unit := func(i int) []float32 {
		v := make([]float32, dims)
		v[i%dims] = 1
		v[(i+1)%dims] = 0.1 * float32(i/dims)
		return v
	}
	for i := range 200 {
		if err := x.Add(fmt.Sprint(i), unit(i)); err != nil {
			t.Fatal(err)
		}
	}
	if x.Len() != 200 {
		t.Fatalf("Len = %d", x.Len())
	}
	q := unit(3)
	if got := x.Search(q, 1, nil); len(got) != 1 || got[0].ID != "3" {
		t.Errorf("Search = %v, want id 3 first", got)
	}
	even := func(id string) bool { return atoi(id)%2 == 0 }
	for _, h := range x.Search(q, 5, even) {
		if !even(h.ID) {
			t.Errorf("filter let %s through", h.ID)
		}
	}
	if !x.Remove("3") || x.Remove("3") || x.Has("3") || x.Len() != 199 {
		t.Fatal("Remove misbehaves")
	}
	for _, h := range x.Search(q, 10, nil) {
		if h.ID == "3" {
			t.Error("removed id returned")
		}
	}
	// Replacing keeps one entry.
	if err := x.Add("4", unit(3)); err != nil || x.Len() != 199 {
		t.Fatalf("replace: %v, Len %d", err, x.Len())
	}
	if got := x.Search(q, 1, nil); got[0].ID != "4" {
		t.Errorf("after replace: %v, want 4", got)
	}
	// Removing most vectors re-centres and still finds the rest.
	for i := range 190 {
		x.Remove(fmt.Sprint(i))
	}
	if got := x.Search(unit(195), 1, nil); len(got) != 1 || got[0].ID != "195" {
		t.Errorf("after mass removal: %v, want 195", got)
	}
}

func TestVectorIndexRejects(t *testing.T) {
	x := NewVectorIndex(3)
	tests := []struct {
		name string
		vec  []float32
	}{
		{"short", []float32{1, 2}},
		{"long", []float32{1, 2, 3, 4}},
		{"NaN", []float32{1, float32(math.NaN()), 0}},
		{"Inf", []float32{float32(math.Inf(1)), 0, 0}},
	}
	for _, tt := range tests {
		if err := x.Add("a", tt.vec); err == nil {
			t.Errorf("%s: Add accepted %v", tt.name, tt.vec)
		}
	}
	if err := x.Add("a", []float32{1, 2}); !errors.Is(err, ErrDimensions) {
		t.Errorf("err = %v, want ErrDimensions", err)
	}
	if err := x.AddBatch([]string{"a", "b"}, [][]float32{{1, 0, 0}, {1}}); err == nil || x.Len() != 0 {
		t.Errorf("AddBatch with one bad vector: err %v, Len %d; want error and nothing added", err, x.Len())
	}
	x.Add("z", []float32{0, 0, 0})
	if got := x.Search([]float32{0, 0, 0}, 3, nil); len(got) != 0 {
		t.Errorf("zero query: %v, want nothing", got)
	}
	if got := x.Search([]float32{1, 0}, 3, nil); got != nil {
		t.Errorf("wrong-length query: %v", got)
	}
	if got := x.Search([]float32{1, 0, 0}, 0, nil); got != nil {
		t.Errorf("k=0: %v", got)
	}
}

func TestVectorIndexConcurrent(t *testing.T) {
	const dims = 16
	x := NewVectorIndex(dims)
	x.SetExactBelow(0)
	vecs := randomVectors(2000, dims, 3)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i, v := range vecs {
			x.Add(fmt.Sprint(i), v)
			if i%3 == 0 {
				x.Remove(fmt.Sprint(i / 2))
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			for i := range 300 {
				for _, h := range x.Search(vecs[i], 5, nil) {
					if h.ID == "" {
						t.Error("empty id")
					}
				}
			}
		})
	}
	wg.Wait()
}

// fakeEmbedder maps the words "red", "green", "blue" to axes.
type fakeEmbedder struct {
	fail  error
	calls int
	mu    sync.Mutex
}

func (f *fakeEmbedder) Name() string    { return "fake" }
func (f *fakeEmbedder) Dimensions() int { return 3 }
func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 3)
		for _, w := range Terms(s) {
			switch w {
			case "red", "crimson":
				v[0]++
			case "green":
				v[1]++
			case "blue", "azure":
				v[2]++
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestEngine(t *testing.T) {
	ctx := context.Background()
	emb := &fakeEmbedder{}
	e := NewEngine(emb)
	docs := []Document{
		{ID: "r", Fields: Fields{Title: "Crimson", Interpretation: "crimson tones"}},
		{ID: "g", Fields: Fields{Title: "Green", Interpretation: "green song"}},
		{ID: "b", Fields: Fields{Title: "Azure", Interpretation: "azure"}, Vector: []float32{0, 0, 1}},
	}
	if err := e.Add(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if e.Len() != 3 || emb.calls != 1 {
		t.Fatalf("Len %d, embed calls %d; want 3 docs in one batch call", e.Len(), emb.calls)
	}
	first := func(mode Mode, q string, filter func(string) bool) string {
		hits, err := e.SearchMode(ctx, mode, q, 3, filter)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			return ""
		}
		return hits[0].ID
	}
	if got := first(Semantic, "red", nil); got != "r" {
		t.Errorf("semantic red → %q, want r (no shared word, same vector)", got)
	}
	if got := first(Lexical, "red", nil); got != "" {
		t.Errorf("lexical red → %q, want nothing", got)
	}
	if got := first(Hybrid, "red", nil); got != "r" {
		t.Errorf("hybrid red → %q, want r from the vector side", got)
	}
	if got := first(Hybrid, "green", func(id string) bool { return id != "g" }); got == "g" {
		t.Error("filter ignored")
	}
	if !e.Remove("r") || e.Len() != 2 {
		t.Fatal("Remove")
	}
	if got := first(Hybrid, "crimson", nil); got == "r" {
		t.Error("removed document returned")
	}
	if hits, err := e.Search(ctx, "green", 0, nil); err != nil || len(hits) != 0 {
		t.Errorf("k=0: %v, %v", hits, err)
	}
}

func TestEngineErrors(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	e := NewEngine(&fakeEmbedder{fail: boom})
	if err := e.Add(ctx, []Document{{ID: "a", Fields: Fields{Title: "x"}}}); !errors.Is(err, boom) || e.Len() != 0 {
		t.Errorf("Add with failing embedder: %v, Len %d", err, e.Len())
	}
	if _, err := e.Search(ctx, "x", 5, nil); !errors.Is(err, boom) {
		t.Errorf("Search with failing embedder: %v", err)
	}
	if hits, err := e.SearchMode(ctx, Lexical, "x", 5, nil); err != nil || len(hits) != 0 {
		t.Errorf("lexical search needs no embedder: %v, %v", hits, err)
	}
	e = NewEngine(&fakeEmbedder{})
	if err := e.Add(ctx, []Document{{ID: ""}}); err == nil {
		t.Error("document without id accepted")
	}
	if err := e.Add(ctx, []Document{{ID: "a", Vector: []float32{1}}}); !errors.Is(err, ErrDimensions) {
		t.Errorf("wrong-length vector: %v", err)
	}
}

// codedIndex returns an index of vecs under the ids "0", "1", … that
// searches by its codes however small it is.
func codedIndex(t testing.TB, vecs [][]float32) *VectorIndex {
	t.Helper()
	x := NewVectorIndex(len(vecs[0]))
	x.SetExactBelow(0)
	ids := make([]string, len(vecs))
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	if err := x.AddBatch(ids, vecs); err != nil {
		t.Fatal(err)
	}
	return x
}
