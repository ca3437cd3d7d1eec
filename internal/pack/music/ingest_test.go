package music

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

func TestIngestReportsBadLinesAndGoesOn(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		svc := New(db, testEmbedder(t), nil)
		input := strings.Join([]string{
			`{"isrc":"USRC17607839","title":"One","artist":"A","interpretation":"bright pop"}`, // 1
			`{"isrc":"nope","title":"Bad ISRC","artist":"A"}`,                                  // 2
			``, // 3: blank lines are not records
			`{"isrc":"USRC17607840","title":"Two","artist":"A"`,                                                  // 4: truncated JSON
			`{"isrc":"USRC17607841","artist":"A"}`,                                                               // 5: no title
			`{"isrc":"USRC17607842","title":"x","artist":"A","energy":0.5}`,                                      // 6: unknown field
			`{"isrc":"USRC17607843","title":"x","artist":"A","audioFeatures":{"energy":1.5}}`,                    // 7
			`{"isrc":"USRC17607844","title":"x","artist":"A","duration":-1}`,                                     // 8
			`{"isrc":"USRC17607845","title":"x\u0000","artist":"A"}`,                                             // 9: NUL
			`{"isrc":"USRC17607846","title":"Three","artist":"A","inLibrary":true,"isIndexed":true,"score":0.5}`, // 10: tool output is accepted
			`[1,2]`, // 11
			`{"isrc":"USRC17607847","title":"x","artist":"A"} {}`, // 12: trailing data
		}, "\n")
		var bad []string
		st, err := svc.Ingest(context.Background(), strings.NewReader(input), IngestOptions{BatchSize: 2,
			LineError: func(line int, err error) { bad = append(bad, fmt.Sprintf("%d: %v", line, err)) }})
		if err != nil {
			t.Fatal(err)
		}
		if st != (IngestStats{Lines: 11, Added: 2, Skipped: 9}) {
			t.Errorf("stats %+v", st)
		}
		wantLines := []string{"2: isrc", "4: not a valid JSON", "5: title: required", "6: not a valid JSON object: unknown field \"energy\"",
			"7: audioFeatures.energy", "8: duration", "9: title: invalid text", "11: not a valid JSON", "12: not a valid JSON object: data after"}
		if len(bad) != len(wantLines) {
			t.Fatalf("bad lines: %q", bad)
		}
		for i, w := range wantLines {
			if !strings.HasPrefix(bad[i], w) {
				t.Errorf("bad line report %q, want prefix %q", bad[i], w)
			}
		}
		status, err := db.IndexStatus(context.Background())
		if err != nil || status.Total != 2 || status.Embedded != 2 {
			t.Errorf("index status %+v, %v", status, err)
		}
	})
}

func TestIngestIsIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		svc := New(db, testEmbedder(t), nil)
		var lines []string
		for i := range 25 {
			lines = append(lines, fmt.Sprintf(`{"isrc":"QZAAA%07d","title":"Track %d","artist":"A","interpretation":"song number %d"}`, i, i, i))
		}
		input := strings.Join(lines, "\n") + "\n"
		st, err := svc.Ingest(ctx, strings.NewReader(input), IngestOptions{BatchSize: 10})
		if err != nil || st != (IngestStats{Lines: 25, Added: 25}) {
			t.Fatalf("first run: %+v, %v", st, err)
		}
		before, _ := db.GetIndex(ctx, []string{"QZAAA0000003"})
		st, err = svc.Ingest(ctx, strings.NewReader(input), IngestOptions{BatchSize: 10})
		if err != nil || st != (IngestStats{Lines: 25, Unchanged: 25}) {
			t.Fatalf("second run: %+v, %v", st, err)
		}
		after, _ := db.GetIndex(ctx, []string{"QZAAA0000003"})
		if !after[0].UpdatedAt.Equal(before[0].UpdatedAt) {
			t.Errorf("an unchanged record was written again")
		}
		// One changed line, and an ISRC given twice: the later line wins.
		lines[3] = `{"isrc":"QZAAA0000003","title":"Track 3","artist":"A","interpretation":"now a different song"}`
		lines = append(lines, `{"isrc":"qzaaa0000004","title":"Track 4 (final)","artist":"A"}`)
		st, err = svc.Ingest(ctx, strings.NewReader(strings.Join(lines, "\n")), IngestOptions{BatchSize: 100})
		if err != nil || st != (IngestStats{Lines: 26, Updated: 2, Unchanged: 24}) {
			t.Fatalf("third run: %+v, %v", st, err)
		}
		recs, _ := db.GetIndex(ctx, []string{"QZAAA0000003", "QZAAA0000004"})
		if recs[0].Interpretation != "now a different song" || recs[1].Title != "Track 4 (final)" || len(recs[1].Embedding) == 0 {
			t.Errorf("updates not stored: %+v", recs)
		}
	})
}

func TestIngestKeepsEngineInStep(t *testing.T) {
	db := openStore(t, filepath.Join(t.TempDir(), "db"))
	ctx := context.Background()
	svc := New(db, testEmbedder(t), nil)
	eng, err := svc.Engine(ctx) // loaded while the index is empty
	if err != nil || eng.Len() != 0 {
		t.Fatalf("engine: %v, %v", eng, err)
	}
	if _, err := svc.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if eng.Len() != 3 {
		t.Fatalf("engine has %d documents after ingest, want 3", eng.Len())
	}
	out, err := svc.semanticSearch(ctx, SemanticSearchInput{Query: "calm piano", Limit: 5, MaxEnergy: f64(0.3)})
	if err != nil || len(out.Tracks) != 1 || out.Tracks[0].ISRC != "AUNMG2400013" {
		t.Fatalf("search after ingest: %+v, %v", out, err)
	}
}

// writeCounter is a store that counts the writes that reach it.
type writeCounter struct {
	Store
	writes atomic.Int64
}

func (w *writeCounter) AddTracks(ctx context.Context, t []store.Track) (int, error) {
	w.writes.Add(1)
	return w.Store.AddTracks(ctx, t)
}

func (w *writeCounter) AddAlbums(ctx context.Context, a []store.Album) (int, error) {
	w.writes.Add(1)
	return w.Store.AddAlbums(ctx, a)
}

func (w *writeCounter) RemoveTracks(ctx context.Context, ids []string) (int, error) {
	w.writes.Add(1)
	return w.Store.RemoveTracks(ctx, ids)
}

func (w *writeCounter) RemoveAlbums(ctx context.Context, ids []string) (int, error) {
	w.writes.Add(1)
	return w.Store.RemoveAlbums(ctx, ids)
}

func (w *writeCounter) UpsertIndex(ctx context.Context, recs []store.IndexRecord) error {
	w.writes.Add(1)
	return w.Store.UpsertIndex(ctx, recs)
}

func (w *writeCounter) SetEmbeddings(ctx context.Context, embs []store.Embedding) (int, error) {
	w.writes.Add(1)
	return w.Store.SetEmbeddings(ctx, embs)
}

func (w *writeCounter) DeleteIndex(ctx context.Context, isrcs []string) (int, error) {
	w.writes.Add(1)
	return w.Store.DeleteIndex(ctx, isrcs)
}

// A search never writes, even when it loads records stored without an
// embedding (written by another tool or process): it embeds them in memory.
// Writing their vectors back is Load's job, run when serve starts.
func TestSearchNeverWritesLoadDoes(t *testing.T) {
	db := openStore(t, filepath.Join(t.TempDir(), "db"))
	ctx := context.Background()
	if _, err := New(db, testEmbedder(t), nil).Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "USRC17607839", Title: "Bare", Artist: "B",
		Interpretation: "solo cello lament"}}); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	w := &writeCounter{Store: db}
	svc := New(w, testEmbedder(t), nil, WithClock(func() time.Time { return now }))

	out, err := svc.semanticSearch(ctx, SemanticSearchInput{Query: "solo cello lament", Limit: 5})
	if err != nil || len(out.Tracks) == 0 || out.Tracks[0].ISRC != "USRC17607839" {
		t.Fatalf("first search (loads the engine): %+v, %v", out, err)
	}
	// Another process adds a record without an embedding; the next search
	// after the refresh interval loads it as a delta, still without writing.
	if err := db.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "USRC17607840", Title: "Later", Artist: "C",
		Interpretation: "brass band fanfare"}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(DefaultRefreshInterval + time.Second)
	out, err = svc.semanticSearch(ctx, SemanticSearchInput{Query: "brass band fanfare", Limit: 5})
	if err != nil || len(out.Tracks) == 0 || out.Tracks[0].ISRC != "USRC17607840" {
		t.Fatalf("search after a refresh: %+v, %v", out, err)
	}
	if n := w.writes.Load(); n != 0 {
		t.Fatalf("searches wrote to the store %d times, want 0", n)
	}
	if status, _ := db.IndexStatus(ctx); status.Embedded != 3 {
		t.Errorf("searches saved embeddings: %+v", status)
	}

	st, err := svc.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st != (LoadStats{Records: 5, Reused: 3, Reembedded: 2}) {
		t.Errorf("Load: %+v", st)
	}
	if status, _ := db.IndexStatus(ctx); status.Embedded != 5 {
		t.Errorf("Load did not save the embeddings it made: %+v", status)
	}
	// Loaded again, everything is reused.
	if st, err := svc.Load(ctx); err != nil || st.Reembedded != 0 {
		t.Errorf("second Load: %+v, %v", st, err)
	}
}

// Reembed writes back what Load would, without building an engine: for
// `toolport index add`.
func TestReembed(t *testing.T) {
	db := openStore(t, filepath.Join(t.TempDir(), "db"))
	ctx := context.Background()
	if err := db.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "USRC17607839", Title: "Bare", Artist: "B"}}); err != nil {
		t.Fatal(err)
	}
	svc := New(db, testEmbedder(t), nil)
	if n, err := svc.Reembed(ctx); err != nil || n != 1 {
		t.Fatalf("Reembed: %d, %v; want 1", n, err)
	}
	if n, err := svc.Reembed(ctx); err != nil || n != 0 {
		t.Fatalf("second Reembed: %d, %v; want 0", n, err)
	}
	if status, _ := db.IndexStatus(ctx); status.Embedded != 1 || status.Embedder != testEmbedder(t).Name() {
		t.Errorf("status after Reembed: %+v", status)
	}
}

func TestImportLibrary(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		svc := New(db, testEmbedder(t), nil)
		jsonl := `{"tidalId":"396698919","isrc":"AUNMG2400011","title":"4M","artist":"Air Max '97","duration":201}
{"isrc":"au-nmg-24-00012","title":"BITTERSWEET","artist":"Air Max '97"}
{"title":"no ids"}
{"type":"album","tidalId":"381265361","title":"Die With A Smile","artist":"Lady Gaga","trackCount":1}
{"tidalId":"12 34","title":"bad id"}
not json
`
		var bad []int
		st, err := svc.ImportLibrary(ctx, strings.NewReader(jsonl), "jsonl", func(line int, err error) { bad = append(bad, line) })
		if err != nil || st != (LibraryImportStats{Lines: 6, TracksAdded: 2, AlbumsAdded: 1, Skipped: 3}) || fmt.Sprint(bad) != "[3 5 6]" {
			t.Fatalf("jsonl: %+v, %v, bad lines %v", st, err, bad)
		}
		csv := "tidal_id,ISRC,Title,Artist,Album,duration\n" +
			"396698919,AUNMG2400011,4M,Air Max '97,Progress,201\n" + // already there: updated
			",USRC17607839,\"Comma, Song\",X,,\n" +
			"1,USRC1,bad isrc,X,,\n" +
			"2,,too,many,fields,1,extra\n" +
			"3,,Three,X,,abc\n"
		bad = nil
		st, err = svc.ImportLibrary(ctx, strings.NewReader(csv), "csv", func(line int, err error) { bad = append(bad, line) })
		if err != nil || st != (LibraryImportStats{Lines: 5, TracksAdded: 1, TracksUpdated: 1, Skipped: 3}) || fmt.Sprint(bad) != "[4 5 6]" {
			t.Fatalf("csv: %+v, %v, bad lines %v", st, err, bad)
		}
		page, _ := db.ListTracks(ctx, store.ListOptions{Query: "comma"})
		if page.Total != 1 || page.Tracks[0].Title != "Comma, Song" || page.Tracks[0].ISRC != "USRC17607839" {
			t.Errorf("csv track: %+v", page)
		}
		in, _ := db.LibraryStatus(ctx, []string{"AUNMG2400012"}, []string{"396698919"})
		if !in.ISRCs["AUNMG2400012"] || !in.TidalIDs["396698919"] {
			t.Errorf("imported tracks missing: %+v", in)
		}
		if _, err := svc.ImportLibrary(ctx, strings.NewReader("tidalId,colour\n1,red\n"), "csv", nil); err == nil {
			t.Error("unknown CSV column accepted")
		}
	})
}

func TestReadLineSkipsOverlongLines(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+10)
	input := `{"isrc":"USRC17607839","title":"One","artist":"A"}` + "\n" + long + "\n" + `{"isrc":"USRC17607840","title":"Two","artist":"A"}`
	db := openStore(t, filepath.Join(t.TempDir(), "db"))
	var bad []int
	st, err := New(db, testEmbedder(t), nil).Ingest(context.Background(), strings.NewReader(input),
		IngestOptions{LineError: func(line int, _ error) { bad = append(bad, line) }})
	if err != nil || st != (IngestStats{Lines: 3, Added: 2, Skipped: 1}) || fmt.Sprint(bad) != "[2]" {
		t.Fatalf("%+v, %v, %v", st, err, bad)
	}
}

func FuzzParseIndexLine(f *testing.F) {
	for _, s := range strings.Split(seedJSONL, "\n") {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"isrc":"USRC17607839","title":"x","artist":"y","audioFeatures":{"key":3,"mode":1}}`))
	f.Add([]byte(`{"isrc":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseIndexLine(line)
		if err != nil {
			return
		}
		if !validISRC(r.ISRC) || r.Title == "" || r.Artist == "" || r.ContentHash != RecordHash(r) {
			t.Fatalf("accepted an invalid record: %+v", r)
		}
	})
}

func FuzzParseLibraryJSON(f *testing.F) {
	f.Add([]byte(`{"tidalId":"1","isrc":"AUNMG2400011","title":"4M","duration":201}`))
	f.Add([]byte(`{"type":"album","tidalId":"381265361","trackCount":1}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		it, err := ParseLibraryJSON(line)
		if err != nil {
			return
		}
		if it.Type == "album" && it.Album.TidalID == "" || it.Type == "track" && it.Track.TidalID == "" && it.Track.ISRC == "" {
			t.Fatalf("accepted an item without an id: %+v", it)
		}
	})
}
