package music

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// enrichFixture is a SQLite store with 2,000 library tracks and 2,000
// indexed records, and 100 search results of which every other one is in
// each.
func enrichFixture(tb testing.TB) (*sqlstore.DB, []TrackResult, []AlbumResult) {
	tb.Helper()
	db := openStore(tb, filepath.Join(tb.TempDir(), "bench.db"))
	ctx := context.Background()
	var lib []store.Track
	var recs []store.IndexRecord
	for i := range 2000 {
		lib = append(lib, store.Track{TidalID: fmt.Sprint(1_000_000 + 2*i), ISRC: fmt.Sprintf("USAAA%07d", 2*i), Title: "t", Artist: "a"})
		recs = append(recs, store.IndexRecord{ISRC: fmt.Sprintf("USAAA%07d", 2*i+1), Title: "t", Artist: "a"})
	}
	if _, err := db.AddTracks(ctx, lib); err != nil {
		tb.Fatal(err)
	}
	if err := db.UpsertIndex(ctx, recs); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.AddAlbums(ctx, []store.Album{{TidalID: "77", Title: "x", Artist: "y"}}); err != nil {
		tb.Fatal(err)
	}
	tracks := make([]TrackResult, 100)
	for i := range tracks {
		tracks[i] = TrackResult{TidalID: fmt.Sprint(1_000_000 + i), ISRC: fmt.Sprintf("USAAA%07d", i)}
	}
	albums := []AlbumResult{{TidalID: "77"}, {TidalID: "78"}}
	return db, tracks, albums
}

func TestEnrichFlags(t *testing.T) {
	db, tracks, albums := enrichFixture(t)
	var tm timings
	if err := enrich(context.Background(), db, tracks, albums, &tm); err != nil {
		t.Fatal(err)
	}
	for i, tr := range tracks {
		if tr.InLibrary != (i%2 == 0) || tr.IsIndexed != (i%2 == 1) {
			t.Errorf("result %d: inLibrary %v isIndexed %v", i, tr.InLibrary, tr.IsIndexed)
		}
	}
	if !albums[0].InLibrary || albums[1].InLibrary {
		t.Errorf("albums: %+v", albums)
	}
	// A track without an ISRC is never indexed, and matches the library by id alone.
	noISRC := []TrackResult{{TidalID: "1000000"}, {TidalID: "5"}}
	if err := enrich(context.Background(), db, noISRC, nil, &tm); err != nil {
		t.Fatal(err)
	}
	if !noISRC[0].InLibrary || noISRC[0].IsIndexed || noISRC[1].InLibrary {
		t.Errorf("no ISRC: %+v", noISRC)
	}
}

// BenchmarkEnrich100 measures the inLibrary/isIndexed enrichment of 100
// Tidal results (and 2 albums) on the embedded SQLite store. Target: ≤ 1 ms.
func BenchmarkEnrich100(b *testing.B) {
	db, tracks, albums := enrichFixture(b)
	ctx := context.Background()
	var tm timings
	b.ReportAllocs()
	for b.Loop() {
		if err := enrich(ctx, db, tracks, albums, &tm); err != nil {
			b.Fatal(err)
		}
	}
}
