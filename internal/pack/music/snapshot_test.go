package music

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/musiccaps"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// noSnapshots hides a store's snapshots: the service then loads from the
// records, as before snapshots existed.
type noSnapshots struct{ Store }

// coldLoad loads svc's engine the way a new process does and reports how.
func coldLoad(t testing.TB, svc *Service) LoadStats {
	t.Helper()
	svc.loadMu.Lock()
	defer svc.loadMu.Unlock()
	st, err := svc.reloadLocked(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sameSearches checks that two services answer queries alike.
func sameSearches(t *testing.T, a, b *Service) {
	t.Helper()
	ctx := context.Background()
	ea, _ := a.Engine(ctx)
	eb, _ := b.Engine(ctx)
	for _, q := range []string{"late-night club track", "cello", "four in the morning", "nothing like it"} {
		ha, err1 := ea.Search(ctx, q, 50, nil)
		hb, err2 := eb.Search(ctx, q, 50, nil)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		ids := func(hs []index.Hit) []string {
			var out []string
			for _, h := range hs {
				out = append(out, h.ID)
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(ids(ha), ids(hb)) {
			t.Errorf("%q: %v vs %v", q, ha, hb)
		}
	}
	a.fmu.Lock()
	b.fmu.Lock()
	defer a.fmu.Unlock()
	defer b.fmu.Unlock()
	if len(a.features) != len(b.features) || len(a.features) == 0 {
		t.Fatalf("features: %d vs %d", len(a.features), len(b.features))
	}
	for isrc, fa := range a.features {
		fb, ok := b.features[isrc]
		for i := range fa {
			if !ok || (fa[i] != fb[i] && !(math.IsNaN(float64(fa[i])) && math.IsNaN(float64(fb[i])))) {
				t.Errorf("features of %s: %v vs %v", isrc, fa, fb)
			}
		}
	}
}

// TestSnapshotLoad: a Load saves the index; a new service loads it from
// the snapshot and searches like one that loaded the records; any write
// to the index makes the snapshot stale, and a stale or damaged snapshot
// is never used.
func TestSnapshotLoad(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		emb := testEmbedder(t)
		writer := New(db, emb, nil)
		if _, err := writer.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		if st, err := writer.Load(ctx); err != nil || st.Snapshot {
			t.Fatalf("Load: %+v, %v", st, err)
		}

		fresh := New(db, emb, nil)
		if st := coldLoad(t, fresh); !st.Snapshot || st.Records == 0 {
			t.Fatalf("a new service did not load the snapshot: %+v", st)
		}
		fromRecords := New(noSnapshots{db}, emb, nil)
		if st := coldLoad(t, fromRecords); st.Snapshot {
			t.Fatal("loaded a snapshot from a store without them")
		}
		sameSearches(t, fresh, fromRecords)

		// Another record: the version moves, the snapshot is stale.
		if err := db.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "USRC17607839", Title: "Bare", Artist: "B",
			Interpretation: "solo cello lament"}}); err != nil {
			t.Fatal(err)
		}
		stale := New(db, emb, nil)
		if st := coldLoad(t, stale); st.Snapshot {
			t.Fatalf("used a stale snapshot: %+v", st)
		}
		v, err := db.IndexVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if eng, _ := stale.Engine(ctx); eng.Len() != v.Count || !eng.Has("USRC17607839") {
			t.Fatalf("engine after the change holds %d records, want %d with the new one", eng.Len(), v.Count)
		}
		// A changed record (same count) is a change too.
		if err := db.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "USRC17607839", Title: "Bare", Artist: "B",
			Interpretation: "solo cello lament, reworked"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := writer.Load(ctx); err != nil { // saves a snapshot of the current version
			t.Fatal(err)
		}
		if err := db.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "USRC17607839", Title: "Bare", Artist: "B",
			Interpretation: "solo cello lament, reworked twice"}}); err != nil {
			t.Fatal(err)
		}
		if st := coldLoad(t, New(db, emb, nil)); st.Snapshot {
			t.Fatalf("used the snapshot after a record changed: %+v", st)
		}

		// A damaged snapshot under the right key: loaded from the records.
		if _, err := writer.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if v, err = db.IndexVersion(ctx); err != nil {
			t.Fatal(err)
		}
		key := snapshotKey(emb, v)
		snap, found, err := db.IndexSnapshot(ctx, engineSnapshotName, key)
		if err != nil || !found {
			t.Fatalf("no snapshot after Load: %v", err)
		}
		for i, damage := range [][]byte{nil, snap.Data[:len(snap.Data)/2], append([]byte("x"), snap.Data[1:]...)} {
			if err := db.SaveIndexSnapshot(ctx, store.IndexSnapshot{Name: engineSnapshotName, Key: key, Data: damage}); err != nil {
				t.Fatal(err)
			}
			svc := New(db, emb, nil)
			if st := coldLoad(t, svc); st.Snapshot || st.Records != v.Count {
				t.Errorf("damage %d: %+v, want a load from the %d records", i, st, v.Count)
			}
			out, err := svc.semanticSearch(ctx, SemanticSearchInput{Query: "solo cello lament", Limit: 3})
			if err != nil || len(out.Tracks) == 0 || out.Tracks[0].ISRC != "USRC17607839" {
				t.Errorf("damage %d: search %+v, %v", i, out, err)
			}
		}
	})
}

// FuzzMusicSnapshot: whatever the bytes, decoding refuses or accepts and
// never panics.
func FuzzMusicSnapshot(f *testing.F) {
	emb, err := defaultEmbedder()
	if err != nil {
		f.Fatal(err)
	}
	eng := index.NewEngine(emb)
	if err := eng.Add(context.Background(), []index.Document{{ID: "A", Fields: index.Fields{Title: "red"}}}); err != nil {
		f.Fatal(err)
	}
	good, err := encodeMusicSnapshot(eng, map[string]featureVec{"A": {1, 2, 3, 4, 5, 6, 7}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Fuzz(func(t *testing.T, data []byte) {
		if e, feats, err := decodeMusicSnapshot(emb, data); err == nil && (e == nil || feats == nil) {
			t.Fatal("accepted without an engine")
		}
	})
}

// BenchmarkColdLoad measures what a process that searches once spends on
// loading the index of the 5,521 MusicCaps demo tracks from SQLite: from the
// records (analysing and coding every one, as before snapshots) and from the
// snapshot, in alternating rounds, plus unpacking the offline embedder for
// comparison. It reports the median, min and max CPU time (user + system of
// the whole process, GC included) and wall time per load.
//
//	go test -run NONE -bench ColdLoad -benchtime 1x ./internal/pack/music/
func BenchmarkColdLoad(b *testing.B) {
	ctx := context.Background()
	db := openStore(b, b.TempDir()+"/bench.db")
	emb := testEmbedder(b)
	r, err := musiccaps.Open()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	writer := New(db, emb, nil)
	if _, err := writer.Ingest(ctx, r, IngestOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := writer.Load(ctx); err != nil {
		b.Fatal(err)
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	cases := []struct {
		name string
		load func()
		cpu  []float64
		wall []float64
	}{
		{name: "records", load: func() {
			if st := coldLoad(b, New(noSnapshots{db}, emb, nil)); st.Records != musiccaps.Tracks || st.Snapshot {
				b.Fatalf("%+v", st)
			}
		}},
		{name: "snapshot", load: func() {
			if st := coldLoad(b, New(db, emb, nil)); st.Records != musiccaps.Tracks || !st.Snapshot {
				b.Fatalf("%+v", st)
			}
		}},
		{name: "embedder", load: func() {
			if _, err := embedding.NewDefault(); err != nil {
				b.Fatal(err)
			}
		}},
	}
	const rounds = 9
	for b.Loop() {
		for round := range rounds {
			for i := range cases {
				c := &cases[(i+round)%len(cases)]
				c0, w0 := cpu(), time.Now()
				c.load()
				c.wall = append(c.wall, float64(time.Since(w0).Microseconds())/1000)
				c.cpu = append(c.cpu, float64((cpu()-c0).Microseconds())/1000)
			}
		}
	}
	for _, c := range cases {
		slices.Sort(c.cpu)
		slices.Sort(c.wall)
		b.ReportMetric(c.cpu[len(c.cpu)/2], c.name+"-cpu-ms")
		b.ReportMetric(c.cpu[0], c.name+"-cpu-min-ms")
		b.ReportMetric(c.cpu[len(c.cpu)-1], c.name+"-cpu-max-ms")
		b.ReportMetric(c.wall[len(c.wall)/2], c.name+"-wall-ms")
		b.Logf("%s: cpu %v ms, wall %v ms", c.name, c.cpu, c.wall)
	}
}

// TestEncodeMusicSnapshotCostsItsSize: the framed snapshot is one
// allocation of its size, the engine's bytes written straight into it; the
// features and the engine decode back.
func TestEncodeMusicSnapshotCostsItsSize(t *testing.T) {
	emb, err := defaultEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	eng := index.NewEngine(emb)
	const n = 5000
	docs := make([]index.Document, n)
	feats := map[string]featureVec{}
	for i := range docs {
		isrc := fmt.Sprintf("USSYN26%05d", i)
		docs[i] = index.Document{ID: isrc, Fields: index.Fields{Title: fmt.Sprintf("song %d", i), Artist: fmt.Sprintf("artist %d", i%50),
			Interpretation: fmt.Sprintf("calm acoustic guitar number%d with soft drums", i)}}
		if i%2 == 0 {
			feats[isrc] = featureVec{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 120}
		}
	}
	if err := eng.Add(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	// The embedder builds its words' unit vectors (20 MB) once in its life,
	// on the first walk of its vocabulary: not the snapshot's cost.
	emb.(embedding.WordVectorSource).EachWord(func(string, []float32) bool { return false })
	var data []byte
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err = encodeMusicSnapshot(eng, feats)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	// Beyond the bytes: the engine's sorted term list and write buffer.
	if budget := uint64(cap(data)) + 16*uint64(4*n) + 1<<20; alloc > budget || cap(data)-len(data) > binary.MaxVarintLen64 {
		t.Errorf("a snapshot of %d bytes (capacity %d) allocated %d (budget %d)", len(data), cap(data), alloc, budget)
	}
	got, gotFeats, err := decodeMusicSnapshot(emb, data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != n || len(gotFeats) != len(feats) || gotFeats["USSYN2600002"] != feats["USSYN2600002"] {
		t.Fatalf("decoded %d tracks and %d features, want %d and %d", got.Len(), len(gotFeats), n, len(feats))
	}
}

// TestColdSearchSavesTheSnapshot: after a write nobody loaded (what
// `index add` leaves), the first process that builds the engine from the
// records saves the snapshot, and the next one reads it; a build that had to
// embed records (their vectors are not stored) saves nothing.
func TestColdSearchSavesTheSnapshot(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		emb := testEmbedder(t)
		if _, err := New(db, emb, nil).Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		first := New(db, emb, nil)
		if st := coldLoad(t, first); st.Snapshot || st.Records == 0 {
			t.Fatalf("first cold load: %+v, want a load from the records", st)
		}
		second := New(db, emb, nil)
		if st := coldLoad(t, second); !st.Snapshot {
			t.Fatalf("second cold load: %+v, want the snapshot the first saved", st)
		}
		sameSearches(t, first, second)

		// Records with another embedder's vectors: a search embeds them in
		// memory only, so its engine is no snapshot of the store.
		other := renamedEmbedder{emb}
		if st := coldLoad(t, New(db, other, nil)); st.Reembedded == 0 || st.Snapshot {
			t.Fatalf("load with another embedder: %+v, want every record embedded", st)
		}
		if st := coldLoad(t, New(db, other, nil)); st.Snapshot {
			t.Fatalf("a snapshot was saved from vectors the store does not hold: %+v", st)
		}
	})
}

// renamedEmbedder is emb under another name: records embedded by emb are
// another embedder's to it.
type renamedEmbedder struct{ embedding.Embedder }

func (renamedEmbedder) Name() string { return "renamed-for-test" }

// scanCounter counts full scans of the index: what loading an engine (or
// re-embedding) costs, in memory and time proportional to the index.
type scanCounter struct {
	Store
	scans int
}

func (c *scanCounter) EachIndexRecord(ctx context.Context, fn func(store.IndexRecord) error) error {
	c.scans++
	return c.Store.EachIndexRecord(ctx, fn)
}

// TestAfterWriteDoesNotLoadTheIndex: after a write, AfterWrite does not read
// the whole index when every record is embedded by the current embedder
// (what `index add` leaves), and embeds again those that are not.
func TestAfterWriteDoesNotLoadTheIndex(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		emb := testEmbedder(t)
		counted := &scanCounter{Store: db}
		svc := New(counted, emb, nil)
		if _, err := svc.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		n, err := svc.AfterWrite(ctx)
		if err != nil || n != 0 || counted.scans != 0 {
			t.Fatalf("AfterWrite on a current index: %d embedded, %d scans, %v; want 0, 0", n, counted.scans, err)
		}
		if svc.loadedEngine() != nil {
			t.Fatal("AfterWrite built the engine")
		}
		// The embedder changed: every record is embedded again and written back.
		other := New(counted, renamedEmbedder{emb}, nil)
		v, _ := db.IndexVersion(ctx)
		if n, err := other.AfterWrite(ctx); err != nil || n != v.Count {
			t.Fatalf("AfterWrite after the embedder changed: %d embedded, %v; want %d", n, err, v.Count)
		}
		if n, err := other.AfterWrite(ctx); err != nil || n != 0 {
			t.Fatalf("AfterWrite again: %d embedded, %v; want 0", n, err)
		}
	})
}
