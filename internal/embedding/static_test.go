package embedding

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"unicode/utf8"
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
	if wv.Dimensions() != 100 || wv.Name() != "glove-100d-sif" || len(wv.words) != 50000 {
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

func TestLoadWordVectorsRejectsMalformed(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"not gzip", []byte("TPWV1\n")},
		{"empty", gz(nil)},
		{"bad magic", gz([]byte("XXXX1\n\x02\x00\x00\x00\x01\x00\x00\x00"))},
		{"zero dims", gz([]byte("TPWV1\n\x00\x00\x00\x00\x01\x00\x00\x00\x01a"))},
		{"truncated words", gz([]byte("TPWV1\n\x02\x00\x00\x00\x01\x00\x00\x00\x05ab"))},
		{"short vectors", gz([]byte("TPWV1\n\x02\x00\x00\x00\x01\x00\x00\x00\x01a\x00\x00\x80\x3f\x01"))},
	}
	for _, tt := range tests {
		if _, err := LoadWordVectors(bytes.NewReader(tt.data)); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	// And the smallest valid asset loads.
	wv, err := LoadWordVectors(bytes.NewReader(gz([]byte("TPWV1\n\x02\x00\x00\x00\x01\x00\x00\x00\x01a\x00\x00\x80\x3f\x01\x02"))))
	if err != nil || wv.Dimensions() != 2 {
		t.Errorf("valid asset: %v", err)
	}
}

func FuzzParseWordVectors(f *testing.F) {
	f.Add([]byte("TPWV1\n\x02\x00\x00\x00\x01\x00\x00\x00\x01a\x00\x00\x80\x3f\x01\x02"))
	f.Add([]byte("TPWV1\n\x02\x00\x00\x00\x02\x00\x00\x00\x01a\x01b\x00\x00\x80\x3f\x00\x00\x80\x3f\x01\x02\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wv, err := parseWordVectors(data)
		if err != nil {
			return
		}
		v, err := wv.Embed(context.Background(), []string{"a b"})
		if err != nil || len(v[0]) != wv.Dimensions() {
			t.Fatalf("Embed after load: %v, %d dims", err, len(v[0]))
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
