package music

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/tooltest"
)

// eachBackendTwoHandles runs fn on a fresh store of every engine, opened
// twice: server is what a running `toolport serve` holds, other what another
// process (`toolport index add`) writes through.
func eachBackendTwoHandles(t *testing.T, fn func(t *testing.T, server, other *sqlstore.DB)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.newDSN(t)
			fn(t, openStore(t, dsn), openStore(t, dsn))
		})
	}
}

// isrcsFound runs semanticSearch and returns the ISRCs found.
func isrcsFound(t *testing.T, svc *Service, in SemanticSearchInput) []string {
	t.Helper()
	if in.Limit == 0 {
		in.Limit = 10
	}
	out, err := svc.semanticSearch(context.Background(), in)
	if err != nil {
		t.Fatalf("semanticSearch %q: %v", in.Query, err)
	}
	var got []string
	for _, tr := range out.Tracks {
		got = append(got, tr.ISRC)
	}
	return got
}

const interval = 5 * time.Second

func TestSearchSeesWhatAnotherProcessIngests(t *testing.T) {
	eachBackendTwoHandles(t, func(t *testing.T, server, other *sqlstore.DB) {
		ctx := context.Background()
		writer := New(other, testEmbedder(t), nil) // the other process
		if _, err := writer.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		clock := tooltest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		svc := New(server, testEmbedder(t), nil, WithRefreshInterval(interval), WithClock(clock.Now), WithNotifications(false)) // polling alone
		harpsichord := SemanticSearchInput{Query: "baroque harpsichord fugue"}
		if got := isrcsFound(t, svc, harpsichord); slices.Contains(got, "QZHAR0000001") {
			t.Fatalf("found %v before the record exists", got)
		}

		// Another process adds a track, rewrites one and stores one
		// without an embedding (as a foreign tool might).
		added := `{"isrc":"QZHAR0000001","title":"Fugue in G minor","artist":"Bach","interpretation":"A baroque harpsichord fugue, intricate and bright","audioFeatures":{"energy":0.15}}
{"isrc":"GBAYE9700123","title":"Hunter","artist":"Björk","album":"Homogenic","interpretation":"Glacial cello drones and whale song","audioFeatures":{"energy":0.5}}
`
		if _, err := writer.Ingest(ctx, strings.NewReader(added), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := other.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "QZBAR0000002", Title: "Bare record", Artist: "Nobody",
			Interpretation: "didgeridoo and throat singing"}}); err != nil {
			t.Fatal(err)
		}

		clock.Advance(interval - time.Millisecond)
		if got := isrcsFound(t, svc, harpsichord); slices.Contains(got, "QZHAR0000001") {
			t.Errorf("found %v before the refresh interval passed: the store was checked too early", got)
		}
		clock.Advance(time.Millisecond)
		tests := []struct {
			in   SemanticSearchInput
			want string
		}{
			{harpsichord, "QZHAR0000001"},
			{SemanticSearchInput{Query: "cello drones whale song"}, "GBAYE9700123"},
			{SemanticSearchInput{Query: "didgeridoo throat singing"}, "QZBAR0000002"},
			{SemanticSearchInput{Query: "harpsichord", MaxEnergy: f64(0.2)}, "QZHAR0000001"}, // features of the delta
		}
		for _, tt := range tests {
			if got := isrcsFound(t, svc, tt.in); len(got) == 0 || got[0] != tt.want {
				t.Errorf("%q after the interval: found %v, want %s first", tt.in.Query, got, tt.want)
			}
		}
		if eng := svc.loadedEngine(); eng.Len() != 5 {
			t.Errorf("engine holds %d records, want 5", eng.Len())
		}
		// The record stored without a vector was embedded in memory for
		// the search, and not saved: a search never writes.
		if recs, _ := server.GetIndex(ctx, []string{"QZBAR0000002"}); len(recs) != 1 || len(recs[0].Embedding) != 0 {
			t.Errorf("a search saved the bare record's embedding: %+v", recs)
		}
	})
}

func TestRefreshHandlesDeletions(t *testing.T) {
	eachBackendTwoHandles(t, func(t *testing.T, server, other *sqlstore.DB) {
		ctx := context.Background()
		writer := New(other, testEmbedder(t), nil)
		if _, err := writer.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		clock := tooltest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		svc := New(server, testEmbedder(t), nil, WithRefreshInterval(interval), WithClock(clock.Now), WithNotifications(false)) // polling alone
		if _, err := svc.Engine(ctx); err != nil {
			t.Fatal(err)
		}

		steps := []struct {
			name  string
			write func() error
			want  RefreshStats
			len   int
		}{
			{"nothing changed", func() error { return nil }, RefreshStats{}, 3},
			{"a deletion: full reload", func() error {
				_, err := other.DeleteIndex(ctx, []string{"AUNMG2400013"})
				return err
			}, RefreshStats{Changed: true, Reloaded: true}, 2},
			{"a deletion and an insert, the count unchanged", func() error {
				if _, err := other.DeleteIndex(ctx, []string{"AUNMG2400011"}); err != nil {
					return err
				}
				_, err := writer.Ingest(ctx, strings.NewReader(`{"isrc":"QZHAR0000001","title":"Fugue","artist":"Bach"}`), IngestOptions{})
				return err
			}, RefreshStats{Changed: true, Delta: 1, Reloaded: true}, 2},
			{"an insert: delta only", func() error {
				_, err := writer.Ingest(ctx, strings.NewReader(`{"isrc":"QZHAR0000002","title":"Prelude","artist":"Bach"}`), IngestOptions{})
				return err
			}, RefreshStats{Changed: true, Delta: 1}, 3},
		}
		for _, s := range steps {
			if err := s.write(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			st, err := svc.Refresh(ctx)
			if err != nil {
				t.Fatalf("%s: refresh: %v", s.name, err)
			}
			if st != s.want || svc.loadedEngine().Len() != s.len {
				t.Errorf("%s: %+v with %d records, want %+v with %d", s.name, st, svc.loadedEngine().Len(), s.want, s.len)
			}
		}
		if got := isrcsFound(t, svc, SemanticSearchInput{Query: "calm ambient piano melancholic"}); slices.Contains(got, "AUNMG2400013") {
			t.Errorf("deleted record found: %v", got)
		}
	})
}

func TestRefreshCanBeTurnedOff(t *testing.T) {
	db := openStore(t, t.TempDir()+"/db")
	ctx := context.Background()
	clock := tooltest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := New(db, testEmbedder(t), nil, WithRefreshInterval(-1), WithClock(clock.Now))
	if _, err := svc.Engine(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := New(db, testEmbedder(t), nil).Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour)
	if got := isrcsFound(t, svc, SemanticSearchInput{Query: "calm piano"}); len(got) != 0 {
		t.Errorf("refresh is off, yet found %v", got)
	}
	if st, err := svc.Refresh(ctx); err != nil || st != (RefreshStats{Changed: true, Delta: 3}) {
		t.Errorf("explicit Refresh: %+v, %v", st, err)
	}
	if got := isrcsFound(t, svc, SemanticSearchInput{Query: "calm piano"}); len(got) == 0 {
		t.Error("nothing found after an explicit Refresh")
	}
}

// Searches keep running while another process ingests and refreshes load:
// run with -race.
func TestSearchesRunDuringRefresh(t *testing.T) {
	eachBackendTwoHandles(t, func(t *testing.T, server, other *sqlstore.DB) {
		ctx := context.Background()
		writer := New(other, testEmbedder(t), nil)
		if _, err := writer.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		clock := tooltest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		svc := New(server, testEmbedder(t), nil, WithRefreshInterval(interval), WithClock(clock.Now), WithNotifications(false)) // polling alone
		if _, err := svc.Engine(ctx); err != nil {
			t.Fatal(err)
		}
		const batches = 20
		var wg sync.WaitGroup
		wg.Go(func() { // the other process
			for b := range batches {
				var lines strings.Builder
				for i := range 5 {
					fmt.Fprintf(&lines, `{"isrc":"QZCON%07d","title":"Song %d","artist":"Band","interpretation":"calm piano number %d","audioFeatures":{"energy":0.1}}`+"\n", b*5+i, b*5+i, b*5+i)
				}
				if _, err := writer.Ingest(ctx, strings.NewReader(lines.String()), IngestOptions{}); err != nil {
					t.Error(err)
					return
				}
				if b%5 == 4 { // deletions force full reloads now and then
					if _, err := other.DeleteIndex(ctx, []string{fmt.Sprintf("QZCON%07d", b*5)}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
		for range 4 { // searchers, each moving the clock past the interval
			wg.Go(func() {
				for range 15 {
					clock.Advance(interval)
					if _, err := svc.semanticSearch(ctx, SemanticSearchInput{Query: "calm piano", Limit: 5, MaxEnergy: f64(0.3)}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if _, err := svc.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		want := 3 + batches*5 - batches/5
		if n := svc.loadedEngine().Len(); n != want {
			t.Errorf("after the last refresh the engine holds %d records, want %d", n, want)
		}
	})
}
