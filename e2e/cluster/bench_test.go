package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// BenchmarkCluster drives chat turns through one replica and through three
// (round-robin) of the same deployment, in the same run: each turn calls
// semanticSearch (hybrid query on the 3-node Weaviate cluster) and web_fetch
// (a shared-cache hit after the first), and streams its answer without
// pauses. TOOLPORT_CLUSTER_BENCH_CONCURRENCY turns run at once (default
// 16) while one searcher calls semanticSearch on the same replicas. Use a
// fixed count: -benchtime 200x.
func BenchmarkCluster(b *testing.B) {
	requireEngines(b)
	conc := envInt(b, "TOOLPORT_CLUSTER_BENCH_CONCURRENCY", 16)
	d := deploy(b, 3)
	for _, k := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", k), func(b *testing.B) {
			c := newClient(d.replicas[:k])
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			var search searcher
			stop := make(chan struct{})
			var searchWG sync.WaitGroup
			searchWG.Go(func() { search.run(ctx, c, d.replicas[:k], stop) })

			turns := make([]*turn, b.N)
			sem := make(chan struct{}, conc)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					turns[i] = c.runTurn(ctx, i, fmt.Sprintf("bench turn #%06d", i))
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(stop)
			searchWG.Wait()

			var first []time.Duration
			for _, t := range turns {
				switch {
				case t.err != nil:
					b.Fatalf("turn %d: %v", t.n, t.err)
				case !t.acked || t.streams != 1:
					b.Fatalf("turn %d: acknowledged %v, %d streams", t.n, t.acked, t.streams)
				}
				if _, stop := endOf(t.events); stop != "end_turn" {
					b.Fatalf("turn %d ended with %q", t.n, stop)
				}
				first = append(first, t.firstEvent)
			}
			for _, f := range search.failures {
				b.Errorf("semanticSearch: %s", f)
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
			b.ReportMetric(ms(percentile(first, 50)), "first-p50-ms")
			b.ReportMetric(ms(percentile(first, 99)), "first-p99-ms")
			b.ReportMetric(ms(percentile(search.latencies, 50)), "search-p50-ms")
			b.ReportMetric(ms(percentile(search.latencies, 99)), "search-p99-ms")
			b.ReportMetric(float64(len(search.latencies)), "searches")
		})
	}
}
