package embedding

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/embedding/internal/wvasset"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"lo-fi hip-hop", []string{"lo-fi", "hip-hop"}},
		{"-edge- a--b trailing-", []string{"edge", "a", "b", "trailing"}},
		{"children's songs", []string{"children", "s", "songs"}},
		{"Café Ñandú 123", []string{"café", "ñandú", "123"}},
		{"日本語の歌", []string{"日本語の歌"}},
		{"bad\xffutf8", []string{"bad", "utf8"}},
		{"x" + string(make([]byte, 0)) + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ok", []string{"ok"}},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{"", "lo-fi", "a-", "-a", "İstanbul", "\xff-\xfe", "ǅ-Ǆ", "a-b-c--d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range Words(s) {
			if w == "" || len(w) > 3*MaxWordBytes || !utf8.ValidString(w) {
				t.Fatalf("Words(%q) produced bad token %q", s, w)
			}
			if w[0] == '-' || w[len(w)-1] == '-' {
				t.Fatalf("Words(%q) produced %q with an outer hyphen", s, w)
			}
		}
	})
}

func loadDefault(t testing.TB) *WordVectors {
	t.Helper()
	wv, err := NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	return wv
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestDefaultEmbedder(t *testing.T) {
	wv := loadDefault(t)
	if wv.Dimensions() != 100 || wv.Name() != "glove-100d-sif" || wv.n != 50000 {
		t.Fatalf("Dimensions %d, Name %q, %d words", wv.Dimensions(), wv.Name(), len(wv.words))
	}
	vs, err := wv.Embed(context.Background(), []string{
		"sad melancholic piano ballad",
		"a sorrowful, mournful song with soft piano",
		"loud aggressive heavy metal with distorted electric guitars",
		"",
		"qzxv wmfpt", // no known word
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs[:3] {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Errorf("vector %d has squared norm %v, want 1", i, n)
		}
	}
	if near, far := cosine(vs[0], vs[1]), cosine(vs[0], vs[2]); near <= far {
		t.Errorf("paraphrase cosine %.3f ≤ unrelated cosine %.3f", near, far)
	}
	for _, i := range []int{3, 4} {
		if slices.ContainsFunc(vs[i], func(x float32) bool { return x != 0 }) {
			t.Errorf("text %d has no known words but a non-zero vector", i)
		}
	}
	again, _ := wv.Embed(context.Background(), []string{"sad melancholic piano ballad"})
	if !slices.Equal(again[0], vs[0]) {
		t.Error("embedding is not deterministic")
	}
}

func TestDefaultEmbedderCanceled(t *testing.T) {
	wv := loadDefault(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := wv.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestHyphenatedFallsBackToParts(t *testing.T) {
	wv := loadDefault(t)
	vs, _ := wv.Embed(context.Background(), []string{"piano-violin", "piano violin"})
	if c := cosine(vs[0], vs[1]); c < 0.999 {
		t.Errorf("unknown compound should embed as its parts: cosine %.4f", c)
	}
}

// tinyAsset is a valid asset of the given words, dims values each
// (word r's row is r+1, r+2, ...).
func tinyAsset(t testing.TB, dims int, words ...string) []byte {
	t.Helper()
	rows := make([]int8, 0, len(words)*dims)
	for r := range words {
		for j := range dims {
			rows = append(rows, int8(r+j+1))
		}
	}
	b, err := wvasset.Append(nil, dims, words, rows)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadWordVectorsRejectsMalformed(t *testing.T) {
	valid := tinyAsset(t, 2, "a", "bb")
	with := func(at int, v uint32) []byte { // valid with one u32 replaced
		b := slices.Clone(valid)
		binary.LittleEndian.PutUint32(b[at:], v)
		return b
	}
	const slotsAt, tableAt = 14, wvasset.HeaderSize
	offsetsAt := tableAt + 4*wvasset.Slots(2)
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"the old gzip format", []byte("\x1f\x8b\x08\x00TPWV1\n")},
		{"bad magic", append([]byte("TPWV9\n"), valid[6:]...)},
		{"header only", valid[:wvasset.HeaderSize]},
		{"zero dims", with(6, 0)},
		{"huge dims", with(6, wvasset.MaxDims+1)},
		{"zero words", with(10, 0)},
		{"slots not a power of two", with(slotsAt, 3)},
		{"fewer slots than words", with(slotsAt, 1)},
		{"huge slot count", with(slotsAt, 1<<31)},
		{"first offset not zero", with(offsetsAt, 1)},
		{"offsets going back", with(offsetsAt+4, 4)},
		{"offset past the words", with(offsetsAt+8, 1<<30)},
		{"a row short", valid[:len(valid)-1]},
		{"a byte too many", append(slices.Clone(valid), 0)},
	}
	for _, tt := range tests {
		if _, err := LoadWordVectors(bytes.NewReader(tt.data)); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	wv, err := LoadWordVectors(bytes.NewReader(valid))
	if err != nil || wv.Dimensions() != 2 || wv.row("a") != 0 || wv.row("bb") != 1 || wv.row("c") != -1 {
		t.Errorf("valid asset: %v", err)
	}
}

// Every word of the compiled-in vocabulary is found at its own row, in
// frequency order, and words it lacks are not found.
func TestDefaultAssetLookup(t *testing.T) {
	wv := loadDefault(t)
	if wv.n != 50000 {
		t.Fatalf("%d words, want 50,000", wv.n)
	}
	for r := range wv.n {
		if got := wv.row(wv.word(r)); got != r {
			t.Fatalf("row(%q) = %d, want %d", wv.word(r), got, r)
		}
	}
	if wv.word(0) != "the" {
		t.Errorf("row 0 is %q, want GloVe's most frequent word, \"the\"", wv.word(0))
	}
	for _, w := range []string{"", "qzxvwmfpt", "guitar ", "GUITAR", strings.Repeat("a", 100)} {
		if r := wv.row(w); r != -1 {
			t.Errorf("row(%q) = %d, want -1", w, r)
		}
	}
}

// A table with no empty slot (as damaged input can have) ends a probe for a
// missing word after one pass instead of looping.
func TestLookupEndsOnAFullTable(t *testing.T) {
	b := tinyAsset(t, 1, "a", "b")
	for i := range wvasset.Slots(2) {
		binary.LittleEndian.PutUint32(b[wvasset.HeaderSize+4*i:], 1) // every slot: row 0, tag 0
	}
	wv, err := LoadWordVectors(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if r := wv.row("missing"); r != -1 {
		t.Errorf("row(missing) = %d, want -1", r)
	}
}

func TestAppendRejects(t *testing.T) {
	tests := []struct {
		name  string
		dims  int
		words []string
		rows  []int8
	}{
		{"no words", 1, nil, nil},
		{"no dims", 0, []string{"a"}, nil},
		{"rows short", 2, []string{"a"}, []int8{1}},
		{"repeated word", 1, []string{"a", "a"}, []int8{1, 2}},
		{"empty word", 1, []string{""}, []int8{1}},
	}
	for _, tt := range tests {
		if _, err := wvasset.Append(nil, tt.dims, tt.words, tt.rows); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

// FuzzParseWordVectors feeds arbitrary bytes to the asset parser: it either
// refuses them or gives an embedder whose lookups and embeddings stay in
// bounds.
func FuzzParseWordVectors(f *testing.F) {
	f.Add(tinyAsset(f, 2, "a", "b"))
	f.Add(tinyAsset(f, 3, "a", "lo-fi", "hip", "hop", "café"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wv, err := parseWordVectors(string(data))
		if err != nil {
			return
		}
		for r := range min(wv.n, 64) {
			if got := wv.row(wv.word(r)); got >= wv.n {
				t.Fatalf("row(%q) = %d of %d", wv.word(r), got, wv.n)
			}
		}
		v, err := wv.Embed(context.Background(), []string{"a b lo-fi hip-hop café"})
		if err != nil || len(v[0]) != wv.Dimensions() {
			t.Fatalf("Embed after load: %v, %d dims", err, len(v[0]))
		}
	})
}

// FuzzAssetRoundTrip writes an asset of arbitrary distinct words and reads
// it back: every word is found at its row, with its vector.
func FuzzAssetRoundTrip(f *testing.F) {
	f.Add("the of and lo-fi café", uint8(3))
	f.Add("a", uint8(1))
	f.Fuzz(func(t *testing.T, text string, dims uint8) {
		words := slices.Compact(slices.Sorted(slices.Values(strings.Fields(text))))
		if len(words) == 0 || dims == 0 {
			return
		}
		b := tinyAsset(t, int(dims), words...)
		wv, err := parseWordVectors(string(b))
		if err != nil {
			t.Fatal(err)
		}
		for r, w := range words {
			if got := wv.row(w); got != r || wv.word(r) != w {
				t.Fatalf("row(%q) = %d, word(%d) = %q; want %d, %q", w, got, r, wv.word(r), r, w)
			}
			if row := wv.rows[r*int(dims) : (r+1)*int(dims)]; int8(row[0]) != int8(r+1) {
				t.Fatalf("row %d starts %d, want %d", r, int8(row[0]), int8(r+1))
			}
		}
		if missing := strings.Join(words, " ") + " "; wv.row(missing) != -1 { // has a space: no word has
			t.Fatalf("row(%q) found, want -1", missing)
		}
	})
}

func BenchmarkDefaultEmbed(b *testing.B) {
	wv := loadDefault(b)
	text := "The low quality recording features a ballad song that contains sustained strings, mellow piano melody and soft female vocal singing over it. It sounds sad and soulful."
	for b.Loop() {
		wv.Embed(context.Background(), []string{text})
	}
}

func BenchmarkNewDefault(b *testing.B) {
	for b.Loop() {
		if _, err := NewDefault(); err != nil {
			b.Fatal(err)
		}
	}
}

// WordVector gives the same unit vector before and after the vocabulary's
// unit vectors are built (it computes a lone row until then).
func TestWordVectorBeforeAndAfterEachWord(t *testing.T) {
	wv := loadDefault(t)
	before := wv.WordVector("guitar")
	if wv.builtUnits() != nil {
		t.Fatal("WordVector built every unit vector")
	}
	wv.EachWord(func(string, []float32) bool { return false })
	after := wv.WordVector("guitar")
	if before == nil || !slices.Equal(before, after) {
		t.Errorf("WordVector(guitar): %v before, %v after", before, after)
	}
	if n := cosine(after, after); math.Abs(n-1) > 1e-5 {
		t.Errorf("squared norm %v, want 1", n)
	}
	if wv.WordVector("qzxvwmfpt") != nil {
		t.Error("an unknown word has a vector")
	}
}
