package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
)

// version reads the index version or fails the test.
func version(t *testing.T, db *DB) store.IndexVersion {
	t.Helper()
	v, err := db.IndexVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// since returns the ISRCs EachIndexRecordSince yields, in its order.
func since(t *testing.T, db *DB, at time.Time) []string {
	t.Helper()
	var got []string
	err := db.EachIndexRecordSince(context.Background(), at, func(r store.IndexRecord) error {
		got = append(got, r.ISRC)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestIndexVersionChangesOnEveryWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		if v := version(t, db); v != (store.IndexVersion{}) {
			t.Fatalf("empty index: version %+v, want zero", v)
		}
		recs := sampleRecords()
		if err := db.UpsertIndex(ctx, recs[:2]); err != nil {
			t.Fatal(err)
		}
		v1 := version(t, db)
		got, _ := db.GetIndex(ctx, []string{recs[0].ISRC})
		if v1.Count != 2 || !v1.Updated.Equal(got[0].UpdatedAt) {
			t.Fatalf("after 2 records: %+v, want count 2 and the records' UpdatedAt %v", v1, got[0].UpdatedAt)
		}
		if v := version(t, db); v != v1 {
			t.Errorf("no write, yet the version moved: %+v → %+v", v1, v)
		}

		steps := []struct {
			name      string
			write     func() error
			wantCount int
		}{
			{"insert", func() error { return db.UpsertIndex(ctx, recs[2:]) }, 3},
			{"update", func() error {
				r := recs[0]
				r.Title = "Someone Like You (Live)"
				return db.UpsertIndex(ctx, []store.IndexRecord{r})
			}, 3},
			{"same content again", func() error { return db.UpsertIndex(ctx, recs[1:2]) }, 3},
			{"set embeddings", func() error {
				_, err := db.SetEmbeddings(ctx, []store.Embedding{{ISRC: recs[2].ISRC, Vector: testVector(3, 8), Embedder: "test-8"}})
				return err
			}, 3},
		}
		prev := v1
		for _, s := range steps {
			if err := s.write(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			v := version(t, db)
			if v.Count != s.wantCount || !v.Updated.After(prev.Updated) {
				t.Errorf("%s: version %+v after %+v; want count %d and a later Updated", s.name, v, prev, s.wantCount)
			}
			prev = v
		}
		if n, err := db.DeleteIndex(ctx, []string{recs[1].ISRC}); err != nil || n != 1 {
			t.Fatalf("delete: %d, %v", n, err)
		}
		if v := version(t, db); v.Count != 2 || v == prev {
			t.Errorf("delete: version %+v after %+v; want count 2", v, prev)
		}
	})
}

func TestEachIndexRecordSinceYieldsTheDelta(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		recs := sampleRecords()
		if err := db.UpsertIndex(ctx, recs[:2]); err != nil {
			t.Fatal(err)
		}
		v1 := version(t, db)
		if err := db.UpsertIndex(ctx, recs[2:]); err != nil {
			t.Fatal(err)
		}
		changed := recs[0]
		changed.Interpretation = "now a different reading"
		if err := db.UpsertIndex(ctx, []store.IndexRecord{changed}); err != nil {
			t.Fatal(err)
		}
		v3 := version(t, db)

		tests := []struct {
			name  string
			since time.Time
			want  []string
		}{
			{"from the start", time.Time{}, []string{recs[1].ISRC, recs[2].ISRC, recs[0].ISRC}},
			{"after the first write: the insert, then the update", v1.Updated, []string{recs[2].ISRC, recs[0].ISRC}},
			{"up to date", v3.Updated, nil},
		}
		for _, tt := range tests {
			if got := since(t, db, tt.since); !slices.Equal(got, tt.want) {
				t.Errorf("%s: got %v, want %v (UpdatedAt order)", tt.name, got, tt.want)
			}
		}
		// The delta carries whole records, embeddings included.
		var got []store.IndexRecord
		err := db.EachIndexRecordSince(ctx, v1.Updated, func(r store.IndexRecord) error { got = append(got, r); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[1].Interpretation != "now a different reading" || len(got[1].Embedding) != 8 || !got[1].UpdatedAt.Equal(v3.Updated) {
			t.Errorf("delta records: %+v", got)
		}
		stop := errors.New("stop")
		calls := 0
		if err := db.EachIndexRecordSince(ctx, time.Time{}, func(store.IndexRecord) error { calls++; return stop }); err != stop || calls != 1 {
			t.Errorf("fn error: got %v after %d calls, want it returned as is after 1", err, calls)
		}
	})
}

func TestEachEmbeddingSince(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		recs := sampleRecords() // two embedded by test-8, one not embedded
		if err := db.UpsertIndex(ctx, recs); err != nil {
			t.Fatal(err)
		}
		v1 := version(t, db)
		if _, err := db.SetEmbeddings(ctx, []store.Embedding{
			{ISRC: recs[2].ISRC, Vector: testVector(3, 4), Embedder: "other-4"},
			{ISRC: recs[1].ISRC, Vector: testVector(4, 8), Embedder: "test-8"},
		}); err != nil {
			t.Fatal(err)
		}
		type row struct {
			isrc string
			dims int
		}
		collect := func(embedder string, at time.Time) []row {
			var out []row
			err := db.EachEmbeddingSince(ctx, embedder, at, func(isrc string, vec []float32, updated time.Time) error {
				if !updated.After(at) {
					t.Errorf("%s: UpdatedAt %v is not after %v", isrc, updated, at)
				}
				out = append(out, row{isrc, len(vec)})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		tests := []struct {
			name     string
			embedder string
			since    time.Time
			want     []row
		}{
			{"all, from the start", "", time.Time{}, []row{{recs[0].ISRC, 8}, {recs[1].ISRC, 8}, {recs[2].ISRC, 4}}},
			{"one embedder, from the start", "test-8", time.Time{}, []row{{recs[0].ISRC, 8}, {recs[1].ISRC, 8}}},
			{"all, since the upsert", "", v1.Updated, []row{{recs[1].ISRC, 8}, {recs[2].ISRC, 4}}},
			{"one embedder, since the upsert", "other-4", v1.Updated, []row{{recs[2].ISRC, 4}}},
		}
		for _, tt := range tests {
			got := collect(tt.embedder, tt.since)
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
			}
		}
	})
}

// A writer whose clock is behind the stamps already stored (another
// machine's clock, or a step back) still stamps after them: otherwise a
// reader that saw the later stamp would never load its records.
func TestIndexStampNeverGoesBack(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		recs := sampleRecords()
		if err := db.UpsertIndex(ctx, recs[:1]); err != nil {
			t.Fatal(err)
		}
		future := now().Add(time.Hour)
		if _, err := db.w.ExecContext(ctx, `UPDATE track_index SET updated_at = $1`, db.d.time(future)); err != nil {
			t.Fatal(err)
		}
		seen := version(t, db)
		if err := db.UpsertIndex(ctx, recs[1:2]); err != nil {
			t.Fatal(err)
		}
		if got := since(t, db, seen.Updated); !slices.Equal(got, []string{recs[1].ISRC}) {
			t.Errorf("written after a version stamped in the future: delta %v, want [%s]", got, recs[1].ISRC)
		}
		if _, err := db.SetEmbeddings(ctx, []store.Embedding{{ISRC: recs[0].ISRC, Vector: testVector(5, 8), Embedder: "test-8"}}); err != nil {
			t.Fatal(err)
		}
		if v := version(t, db); !v.Updated.After(future) {
			t.Errorf("SetEmbeddings stamped %v, not after the stored %v", v.Updated, future)
		}
	})
}

// A reader that follows the index through IndexVersion and
// EachIndexRecordSince, as a server does while other processes ingest,
// misses nothing even when several handles write at once.
func TestFollowingTheIndexMissesNothing(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.newDSN(t)
			reader := openDB(t, dsn)
			ctx := context.Background()
			const writers, batches, perBatch = 3, 15, 4
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				db := openDB(t, dsn) // one handle per writer: separate processes
				wg.Go(func() {
					for b := range batches {
						var recs []store.IndexRecord
						for i := range perBatch {
							recs = append(recs, store.IndexRecord{ISRC: fmt.Sprintf("QZ%03d%07d", w, b*perBatch+i), Title: "t", Artist: "a"})
						}
						if err := db.UpsertIndex(ctx, recs); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()

			loaded := map[string]bool{}
			var seen store.IndexVersion
			catchUp := func() {
				v := version(t, reader)
				err := reader.EachIndexRecordSince(ctx, seen.Updated, func(r store.IndexRecord) error {
					if !r.UpdatedAt.After(v.Updated) { // later ones come next time
						loaded[r.ISRC] = true
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				seen = v
				if len(loaded) != v.Count {
					t.Fatalf("after catching up to %+v the reader holds %d records", v, len(loaded))
				}
			}
			for running := true; running; {
				select {
				case <-done:
					running = false
				default:
				}
				catchUp()
			}
			catchUp()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if len(loaded) != writers*batches*perBatch {
				t.Errorf("reader holds %d records, want %d", len(loaded), writers*batches*perBatch)
			}
		})
	}
}

// BenchmarkIndexVersion is the cost of the check a server runs every few
// seconds, over 100k records.
func BenchmarkIndexVersion(b *testing.B) {
	const records = 100_000
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			db := openDB(b, be.newDSN(b))
			ctx := context.Background()
			recs := make([]store.IndexRecord, 0, 5000)
			for start := 0; start < records; start += cap(recs) {
				recs = recs[:0]
				for i := start; i < start+cap(recs); i++ {
					recs = append(recs, store.IndexRecord{ISRC: fmt.Sprintf("QZBEN%07d", i), Title: "t", Artist: "a"})
				}
				if err := db.UpsertIndex(ctx, recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if v, err := db.IndexVersion(ctx); err != nil || v.Count != records {
					b.Fatalf("%+v, %v", v, err)
				}
			}
		})
	}
}
