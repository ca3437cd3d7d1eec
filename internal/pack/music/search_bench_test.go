package music

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolport/toolport/internal/musiccaps"
	"github.com/toolport/toolport/tool"
)

// benchQueries are queries of the kind a chat model sends semanticSearch:
// instruments, genres, moods (which rerank by audio features), negations and
// words the captions never use (which only the vectors answer).
var benchQueries = []string{
	"melancholic piano",
	"upbeat electronic dance music with heavy bass",
	"calm acoustic guitar for studying",
	"something joyful to dance to",
	"angry and loud",
	"music for yoga and meditation",
	"solo cello lament",
	"jazz trumpet in a smoky bar",
	"a sad song with piano and voice",
	"epic orchestral film score with choir",
	"lofi hip hop beats, not sad",
	"female vocalist singing a love ballad",
	"retro 80s synthwave driving at night",
	"traditional folk music with fiddle and accordion",
	"heavy metal with distorted guitars and screaming",
	"city lights at four",
}

// BenchmarkSemanticSearch is the CPU of one semanticSearch as a chat turn
// runs it, over the 5,521 MusicCaps demo tracks in SQLite, cycling through
// benchQueries: "tool" through the tool registry (validation, ranking, the
// store's library and record look-ups, the matched line, the JSON answer),
// "engine" the ranking alone (index.Engine.Search with the tool's pool).
//
//	go test -run NONE -bench SemanticSearch -benchmem ./internal/pack/music/
func BenchmarkSemanticSearch(b *testing.B) {
	ctx := context.Background()
	db := openStore(b, b.TempDir()+"/bench.db")
	svc := New(db, testEmbedder(b), nil)
	r, err := musiccaps.Open()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if _, err := svc.Ingest(ctx, r, IngestOptions{}); err != nil {
		b.Fatal(err)
	}
	eng, err := svc.Engine(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if eng.Len() != musiccaps.Tracks {
		b.Fatalf("%d tracks indexed, want %d", eng.Len(), musiccaps.Tracks)
	}
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	if err := reg.Register(Tools(svc)...); err != nil {
		b.Fatal(err)
	}
	args := make([]json.RawMessage, len(benchQueries))
	for i, q := range benchQueries {
		args[i], _ = json.Marshal(map[string]any{"query": q, "limit": 10})
	}
	b.Run("tool", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if res := reg.Call(ctx, "semanticSearch", args[i%len(args)]); !res.OK() {
				b.Fatalf("%s: %s", args[i%len(args)], res.JSON)
			}
			i++
		}
	})
	b.Run("engine", func(b *testing.B) {
		i := 0
		for b.Loop() {
			hits, err := eng.Search(ctx, benchQueries[i%len(benchQueries)], moodPool, nil)
			if err != nil || len(hits) == 0 {
				b.Fatal(fmt.Sprint(len(hits)), err)
			}
			i++
		}
	})
}
