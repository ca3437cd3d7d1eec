package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
)

func testVector(seed, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(math.Sin(float64(seed*dims+i))) / 3
	}
	return v
}

func sampleRecords() []store.IndexRecord {
	return []store.IndexRecord{
		{ISRC: "GBBKS1700108", Title: "Someone Like You", Artist: "Adele", Album: "21",
			ArtworkURL: "https://img/1.jpg", Duration: 285.5,
			Lyrics: "I heard that you're settled down", Interpretation: "A poignant ballad",
			AudioFeatures: &store.AudioFeatures{Acousticness: ptr(0.89), Energy: ptr(0.31), Valence: ptr(0.18),
				Key: ptr(0.0), Mode: ptr(0.0), Tempo: ptr(67.5), Loudness: ptr(-8.2)},
			Embedding: testVector(1, 8), Embedder: "test-8"},
		{ISRC: "ILX000000001", Title: "הנה מה טוב 🎶", Artist: "עמית", Album: "שירים",
			Interpretation: "שיר שמח על אחווה — with emoji 😀", Embedding: testVector(2, 8), Embedder: "test-8"},
		{ISRC: "QZMCP2300001", Title: "MusicCaps clip", Artist: "MusicCaps", Album: "MusicCaps", Duration: 10,
			Interpretation: "sustained strings, mellow piano"},
	}
}

// withoutTimes clears the store-set timestamps so that records compare.
func withoutTimes(rs []store.IndexRecord) []store.IndexRecord {
	out := make([]store.IndexRecord, len(rs))
	for i, r := range rs {
		r.UpdatedAt = time.Time{}
		if r.ContentHash == "" {
			r.ContentHash = store.ContentHash(r)
		}
		out[i] = r
	}
	return out
}

func TestIndexUpsertAndGet(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		recs := sampleRecords()
		if err := db.UpsertIndex(ctx, recs); err != nil {
			t.Fatal(err)
		}
		got, err := db.GetIndex(ctx, []string{"QZMCP2300001", "MISSING00000", "GBBKS1700108", "ILX000000001", "GBBKS1700108"})
		if err != nil {
			t.Fatal(err)
		}
		want := withoutTimes([]store.IndexRecord{recs[2], recs[0], recs[1]}) // in the order asked, missing left out
		for _, r := range got {
			if r.UpdatedAt.IsZero() {
				t.Errorf("%s: UpdatedAt not set", r.ISRC)
			}
		}
		if !reflect.DeepEqual(withoutTimes(got), want) {
			t.Errorf("GetIndex =\n%+v\nwant\n%+v", withoutTimes(got), want)
		}
		// GetIndexContent: the same records without their embeddings.
		content, err := db.GetIndexContent(ctx, []string{"QZMCP2300001", "MISSING00000", "GBBKS1700108", "ILX000000001", "GBBKS1700108"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			want[i].Embedding = nil
		}
		if !reflect.DeepEqual(withoutTimes(content), want) {
			t.Errorf("GetIndexContent =\n%+v\nwant\n%+v", withoutTimes(content), want)
		}
		want = withoutTimes([]store.IndexRecord{recs[2], recs[0], recs[1]})
		// IndexFeatures: the features of the records that have them.
		features, err := db.IndexFeatures(ctx, []string{"QZMCP2300001", "MISSING00000", "GBBKS1700108", "ILX000000001"})
		if err != nil {
			t.Fatal(err)
		}
		wantFeatures := map[string]*store.AudioFeatures{}
		for _, r := range recs {
			if r.AudioFeatures != nil {
				wantFeatures[r.ISRC] = r.AudioFeatures
			}
		}
		if len(wantFeatures) == 0 || !reflect.DeepEqual(features, wantFeatures) {
			t.Errorf("IndexFeatures = %+v, want %+v", features, wantFeatures)
		}

		// Idempotent: the same batch again changes nothing but UpdatedAt.
		if err := db.UpsertIndex(ctx, recs); err != nil {
			t.Fatal(err)
		}
		again, err := db.GetIndex(ctx, []string{"QZMCP2300001", "GBBKS1700108", "ILX000000001"})
		if err != nil || !reflect.DeepEqual(withoutTimes(again), want) {
			t.Errorf("after a second upsert GetIndex =\n%+v (%v)\nwant\n%+v", withoutTimes(again), err, want)
		}
		st, err := db.IndexStatus(ctx)
		wantSt := store.IndexStatus{Total: 3, Embedded: 2, Embedder: "test-8", Dims: 8,
			Embedders: []store.EmbedderStats{{Name: "test-8", Dims: 8, Count: 2}}}
		if err != nil || !reflect.DeepEqual(st, wantSt) {
			t.Errorf("IndexStatus = %+v, %v; want %+v", st, err, wantSt)
		}
	})
}

func TestIndexEmbeddingLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		recs := sampleRecords()
		if err := db.UpsertIndex(ctx, recs); err != nil {
			t.Fatal(err)
		}
		isrc := recs[0].ISRC
		embedding := func() []float32 {
			t.Helper()
			got, err := db.GetIndex(ctx, []string{isrc})
			if err != nil || len(got) != 1 {
				t.Fatalf("GetIndex(%s) = %v, %v", isrc, got, err)
			}
			return got[0].Embedding
		}

		// Re-ingesting unchanged content without a vector keeps the vector.
		plain := recs[0]
		plain.Embedding, plain.Embedder = nil, ""
		if err := db.UpsertIndex(ctx, []store.IndexRecord{plain}); err != nil {
			t.Fatal(err)
		}
		if got := embedding(); !reflect.DeepEqual(got, recs[0].Embedding) {
			t.Errorf("unchanged content lost its embedding: %v", got)
		}
		states, err := db.IndexStates(ctx, []string{isrc, "MISSING00000"})
		want := map[string]store.IndexState{isrc: {ContentHash: store.ContentHash(recs[0]), Embedder: "test-8", Dims: 8}}
		if err != nil || !reflect.DeepEqual(states, want) || !states[isrc].Embedded() {
			t.Errorf("IndexStates = %+v, %v; want %+v", states, err, want)
		}

		// Changed content without a vector drops the stale one.
		changed := plain
		changed.Lyrics = "new lyrics"
		if err := db.UpsertIndex(ctx, []store.IndexRecord{changed}); err != nil {
			t.Fatal(err)
		}
		if got := embedding(); got != nil {
			t.Errorf("changed content kept a stale embedding of %d dims", len(got))
		}
		states, _ = db.IndexStates(ctx, []string{isrc})
		if s := states[isrc]; s.Embedded() || s.Embedder != "" || s.ContentHash != store.ContentHash(changed) {
			t.Errorf("state after a content change = %+v", s)
		}

		// SetEmbeddings fills it in, and skips records not in the index.
		vec := testVector(9, 16)
		n, err := db.SetEmbeddings(ctx, []store.Embedding{{ISRC: isrc, Vector: vec, Embedder: "test-16"}, {ISRC: "MISSING00000", Vector: vec, Embedder: "test-16"}})
		if err != nil || n != 1 {
			t.Fatalf("SetEmbeddings = %d, %v; want 1", n, err)
		}
		if got := embedding(); !reflect.DeepEqual(got, vec) {
			t.Errorf("embedding after SetEmbeddings = %v, want %v", got, vec)
		}
		st, err := db.IndexStatus(ctx)
		wantSt := store.IndexStatus{Total: 3, Embedded: 2, Embedder: "test-16", Dims: 16, Embedders: []store.EmbedderStats{
			{Name: "test-16", Dims: 16, Count: 1}, {Name: "test-8", Dims: 8, Count: 1}}}
		if err != nil || !reflect.DeepEqual(st, wantSt) {
			t.Errorf("IndexStatus = %+v, %v; want %+v", st, err, wantSt)
		}

		// Delete.
		if n, err := db.DeleteIndex(ctx, []string{isrc, "MISSING00000"}); err != nil || n != 1 {
			t.Errorf("DeleteIndex = %d, %v; want 1", n, err)
		}
		if got, _ := db.GetIndex(ctx, []string{isrc}); len(got) != 0 {
			t.Errorf("deleted record still there: %+v", got)
		}
	})
}

// TestEmbeddingsRoundTripExactly checks that vectors come back bit for bit,
// including values a text encoding would mangle.
func TestEmbeddingsRoundTripExactly(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, math.SmallestNonzeroFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00001), 0.1, 1.0 / 3}
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		big := testVector(3, store.MaxEmbeddingDims)
		recs := []store.IndexRecord{
			{ISRC: "SPECIAL00001", Title: "s", Embedding: special, Embedder: "e"},
			{ISRC: "BIGGEST00001", Title: "b", Embedding: big, Embedder: "e"},
		}
		if err := db.UpsertIndex(ctx, recs); err != nil {
			t.Fatal(err)
		}
		got := map[string][]float32{}
		if err := db.EachEmbedding(ctx, "", func(isrc string, vec []float32) error {
			got[isrc] = vec
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			v := got[r.ISRC]
			if len(v) != len(r.Embedding) {
				t.Fatalf("%s: %d dims back, want %d", r.ISRC, len(v), len(r.Embedding))
			}
			for i := range v {
				if math.Float32bits(v[i]) != math.Float32bits(r.Embedding[i]) {
					t.Errorf("%s[%d] = %#x, want %#x", r.ISRC, i, math.Float32bits(v[i]), math.Float32bits(r.Embedding[i]))
				}
			}
		}
	})
}

func TestEachEmbeddingStreams(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		var recs []store.IndexRecord
		for i := range 300 {
			embedder := "even"
			if i%2 == 1 {
				embedder = "odd"
			}
			recs = append(recs, store.IndexRecord{ISRC: fmt.Sprintf("QZTST%07d", i), Title: "t",
				Embedding: testVector(i, 4), Embedder: embedder})
		}
		recs = append(recs, store.IndexRecord{ISRC: "QZNOVECTOR01", Title: "no vector"})
		if err := db.UpsertIndex(ctx, recs); err != nil {
			t.Fatal(err)
		}
		var seen []string
		if err := db.EachEmbedding(ctx, "odd", func(isrc string, vec []float32) error {
			seen = append(seen, isrc)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 150 || seen[0] != "QZTST0000001" || seen[149] != "QZTST0000299" {
			t.Errorf("EachEmbedding(odd) saw %d vectors, from %v", len(seen), seen[:min(3, len(seen))])
		}

		stop := errors.New("enough")
		calls := 0
		err := db.EachEmbedding(ctx, "", func(string, []float32) error {
			calls++
			if calls == 10 {
				return stop
			}
			return nil
		})
		if err != stop || calls != 10 {
			t.Errorf("EachEmbedding stopped after %d calls with %v, want 10 and the callback's error", calls, err)
		}

		var all, withVec int
		if err := db.EachIndexRecord(ctx, func(r store.IndexRecord) error {
			all++
			if r.Embedding != nil {
				withVec++
			}
			return nil
		}); err != nil || all != 301 || withVec != 300 {
			t.Errorf("EachIndexRecord saw %d records, %d with vectors (%v); want 301, 300", all, withVec, err)
		}

		ctx2, cancel := context.WithCancel(ctx)
		cancel()
		if err := db.EachEmbedding(ctx2, "", func(string, []float32) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Errorf("EachEmbedding with a canceled context = %v, want context.Canceled", err)
		}
	})
}

func TestIndexRejectsBadRecords(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		bad := []struct {
			name string
			rec  store.IndexRecord
		}{
			{"no isrc", store.IndexRecord{Title: "x"}},
			{"long isrc", store.IndexRecord{ISRC: string(make([]byte, store.MaxISRCLen+1))}},
			{"vector without embedder", store.IndexRecord{ISRC: "A", Embedding: []float32{1}}},
			{"empty vector", store.IndexRecord{ISRC: "A", Embedding: []float32{}, Embedder: "e"}},
			{"too many dims", store.IndexRecord{ISRC: "A", Embedding: make([]float32, store.MaxEmbeddingDims+1), Embedder: "e"}},
			{"NaN feature", store.IndexRecord{ISRC: "A", AudioFeatures: &store.AudioFeatures{Tempo: ptr(math.NaN())}}},
			{"NUL in lyrics", store.IndexRecord{ISRC: "A", Lyrics: "a\x00b"}},
		}
		for _, b := range bad {
			if err := db.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "GOOD00000001"}, b.rec}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: UpsertIndex error = %v, want ErrInvalid", b.name, err)
			}
		}
		if _, err := db.SetEmbeddings(ctx, []store.Embedding{{ISRC: "A", Embedder: "e"}}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("SetEmbeddings(nil vector) error = %v, want ErrInvalid", err)
		}
		if st, _ := db.IndexStatus(ctx); st.Total != 0 {
			t.Errorf("rejected batches left %d records", st.Total)
		}
	})
}

func TestDecodeVectorRejectsCorruptRows(t *testing.T) {
	tests := []struct {
		b    []byte
		dims int
	}{
		{[]byte{1, 2, 3}, -1},
		{[]byte{1, 2, 3, 4}, 2},
		{make([]byte, 8), 1},
	}
	for _, tt := range tests {
		if _, err := decodeVector(tt.b, tt.dims); err == nil {
			t.Errorf("decodeVector(%d bytes, %d dims) accepted it", len(tt.b), tt.dims)
		}
	}
}

func FuzzVectorCodec(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVector(b, -1)
		if err != nil {
			if len(b)%4 == 0 {
				t.Fatalf("rejected %d bytes: %v", len(b), err)
			}
			return
		}
		if back := encodeVector(v); string(back) != string(b) && b != nil {
			t.Fatalf("round trip changed %x into %x", b, back)
		}
	})
}

func BenchmarkUpsertIndex(b *testing.B) {
	const records, dims = 1000, 384
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			db := openDB(b, be.newDSN(b))
			ctx := context.Background()
			recs := make([]store.IndexRecord, records)
			for i := range recs {
				recs[i] = store.IndexRecord{ISRC: fmt.Sprintf("QZBEN%07d", i), Title: fmt.Sprint("Track ", i),
					Artist: "Bench", Album: "Bench", Interpretation: "a calm piano piece with soft strings",
					AudioFeatures: &store.AudioFeatures{Energy: ptr(0.5)},
					Embedding:     testVector(i, dims), Embedder: "bench-384"}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := db.UpsertIndex(ctx, recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*records), "ns/record")
		})
	}
}

func TestUpsertIndexSameISRCTwiceInABatch(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		first := store.IndexRecord{ISRC: "DUP000000001", Title: "v1", Embedding: testVector(1, 4), Embedder: "e"}
		second := first
		second.Embedding, second.Embedder = nil, ""
		second.Artist = "artist added later" // hashed: the vector no longer matches
		sameContent := first
		sameContent.Embedding, sameContent.Embedder = nil, ""
		sameContent.ArtworkURL = "https://img/new.jpg" // not hashed: the vector stays
		if err := db.UpsertIndex(ctx, []store.IndexRecord{first, sameContent}); err != nil {
			t.Fatal(err)
		}
		got, err := db.GetIndex(ctx, []string{first.ISRC})
		if err != nil || len(got) != 1 {
			t.Fatalf("GetIndex = %v, %v", got, err)
		}
		if got[0].ArtworkURL != sameContent.ArtworkURL || !reflect.DeepEqual(got[0].Embedding, first.Embedding) {
			t.Errorf("last record should win and keep the vector of the same content: %+v", got[0])
		}
		if err := db.UpsertIndex(ctx, []store.IndexRecord{first, second}); err != nil {
			t.Fatal(err)
		}
		got, _ = db.GetIndex(ctx, []string{first.ISRC})
		if got[0].Artist != second.Artist || got[0].Embedding != nil {
			t.Errorf("changed content should drop the vector: %+v", got[0])
		}
	})
}

// TestCountIndexPrefix counts the records of one registrant (the demo
// set's), on both engines; a prefix's LIKE wildcards are plain text.
func TestCountIndexPrefix(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		var recs []store.IndexRecord
		for i, isrc := range []string{"QZMCP2300001", "QZMCP2300002", "USRC17607839", "QZMCQ2300001"} {
			recs = append(recs, store.IndexRecord{ISRC: isrc, Title: "t", Embedding: testVector(i, 8), Embedder: "e"})
		}
		if err := db.UpsertIndex(ctx, recs); err != nil {
			t.Fatal(err)
		}
		for prefix, want := range map[string]int{"QZMCP23": 2, "QZMC": 3, "US": 1, "QZMCP2%": 0, "": 4} {
			if n, err := db.CountIndexPrefix(ctx, prefix); err != nil || n != want {
				t.Errorf("CountIndexPrefix(%q) = %d, %v; want %d", prefix, n, err, want)
			}
		}
	})
}
