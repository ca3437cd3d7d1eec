package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/ingest"
	"github.com/toolport/toolport/internal/ingest/ingesttest"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
)

// BenchmarkBuildThroughput runs whole builds of benchTracks synthetic tracks
// against local LRCLIB and ReccoBeats servers and a scripted model that
// each take upstreamLatency per answer, on a fresh SQLite store each time,
// and reports tracks/s and the ReccoBeats calls a track cost. A track costs
// 1.5 LRCLIB calls on average (a miss is searched), one ReccoBeats search
// plus its share of a features call (several tracks' ids go in one) and 1
// model call; lyrics and features run at once, the interpretation after
// the lyrics, so one track takes about 3 × latency from start to end.
//
//	go test -run '^$' -bench BuildThroughput -benchtime 2x ./internal/ingest/
func BenchmarkBuildThroughput(b *testing.B) {
	const benchTracks = 60
	const upstreamLatency = 150 * time.Millisecond
	cases := []struct {
		name    string
		workers int
		conc    int
		rate    float64
	}{
		{"defaults_workers16_conc4_rate10", 16, 4, 10},
		{"workers16_conc4_unpaced", 16, 4, 0},
		{"workers16_conc16_unpaced", 16, 16, 0},
		{"workers64_conc64_unpaced", 64, 64, 0},
	}
	up := ingesttest.New(b, upstreamLatency)
	lc, _ := lrclib.NewClient(nil, lrclib.WithBaseURL(up.LRCLIB.URL))
	rc, _ := reccobeats.NewClient(nil, reccobeats.WithBaseURL(up.ReccoBeats.URL))
	model := llmtest.NewScripted(llmtest.ScriptedTurn{Match: "Title:", Events: []llmtest.ScriptedEvent{
		{Delay: upstreamLatency, Text: "A calm instrumental piece for late evenings."}}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 12}})
	var tracks []store.Track
	for i := range benchTracks {
		tracks = append(tracks, ingesttest.SyntheticTrack(i))
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			limits := ingest.DefaultLimits()
			for _, name := range []string{ingest.UpstreamLRCLIB, ingest.UpstreamReccoBeats, ingest.UpstreamModel} {
				l := limits[name]
				l.Concurrency, l.Rate, l.Burst = c.conc, c.rate, c.conc
				limits[name] = l
			}
			var elapsed time.Duration
			var reccoCalls int
			for range b.N {
				b.StopTimer()
				db := openStore(b, storetest.SQLite)
				if _, err := db.AddTracks(context.Background(), tracks); err != nil {
					b.Fatal(err)
				}
				bld, err := ingest.New(ingest.Config{Store: db, Embedder: embedder(b), Lyrics: lc, Features: rc, Model: model,
					ModelName: "scripted", RecordHash: music.RecordHash, Workers: c.workers, Limits: limits})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				rep, err := bld.Build(context.Background(), ingest.Request{}, nil)
				elapsed += time.Since(start)
				reccoCalls += rep.Calls[ingest.UpstreamReccoBeats]
				if err != nil || rep.Indexed != benchTracks {
					b.Fatalf("build: %v, %d indexed", err, rep.Indexed)
				}
			}
			b.ReportMetric(float64(benchTracks*b.N)/elapsed.Seconds(), "tracks/s")
			b.ReportMetric(float64(reccoCalls)/float64(benchTracks*b.N), "reccobeats-calls/track")
			b.ReportMetric(0, "ns/op")
		})
	}
}
