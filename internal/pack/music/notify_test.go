package music

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/internal/tooltest"
)

// TestPostgresNotifiesOtherServices: two services on one PostgreSQL, each
// with its own in-memory engine. What one ingests or re-ingests is in the
// other's search without waiting for the poll interval: the poll here is an
// hour away on a clock that never moves, so only the notification can bring
// it.
func TestPostgresNotifiesOtherServices(t *testing.T) {
	dsn := storetest.DSN(t, storetest.Postgres)
	ctx := context.Background()
	clock := tooltest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	a := New(openStore(t, dsn), testEmbedder(t), nil, WithRefreshInterval(time.Hour), WithClock(clock.Now))
	b := New(openStore(t, dsn), testEmbedder(t), nil, WithRefreshInterval(time.Hour), WithClock(clock.Now))
	refreshed := make(chan struct{}, 1)
	b.watchRefreshed = func() {
		select {
		case refreshed <- struct{}{}:
		default: // one pending wake-up is enough: the test searches again
		}
	}
	if _, err := a.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	fugue := SemanticSearchInput{Query: "baroque harpsichord fugue"}
	if got := isrcsFound(t, b, fugue); slices.Contains(got, "QZHAR0000001") {
		t.Fatalf("found %v before it was added", got)
	}
	// b's engine is loaded: it listens from now on. b is searched again
	// after each refresh a notification started.
	eventually := func(what string, ok func([]string) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second) // a hang guard, not a timing
		for {
			got := isrcsFound(t, b, fugue)
			if ok(got) {
				return
			}
			select {
			case <-refreshed:
			case <-deadline:
				t.Fatalf("%s: b still finds %v after 10 s (the poll is an hour away)", what, got)
			}
		}
	}
	added := `{"isrc":"QZHAR0000001","title":"Fugue in G minor","artist":"Bach","interpretation":"A baroque harpsichord fugue, intricate and bright"}`
	if _, err := a.Ingest(ctx, strings.NewReader(added), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("an added track", func(got []string) bool { return len(got) > 0 && got[0] == "QZHAR0000001" })
	if !b.watching.Load() {
		t.Error("b is not marked as watching")
	}
	// A deletion through a itself reaches b as a full reload.
	db, err := a.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteIndex(ctx, []string{"QZHAR0000001"}); err != nil {
		t.Fatal(err)
	}
	eventually("a deleted track", func(got []string) bool { return !slices.Contains(got, "QZHAR0000001") })
}

// BenchmarkNotifiedChangeReachesAnotherService times, per change, one
// service's ingestion of one track until another service's search finds it,
// both on one PostgreSQL: the ingestion, the notification's trip and the
// incremental refresh it triggers (before, a poll every 5 s).
func BenchmarkNotifiedChangeReachesAnotherService(b *testing.B) {
	dsn := storetest.DSN(b, storetest.Postgres)
	ctx := context.Background()
	a := New(openStore(b, dsn), testEmbedder(b), nil, WithRefreshInterval(time.Hour))
	other := New(openStore(b, dsn), testEmbedder(b), nil, WithRefreshInterval(time.Hour))
	refreshed := make(chan struct{}, 1)
	other.watchRefreshed = func() {
		select {
		case refreshed <- struct{}{}:
		default:
		}
	}
	if _, err := a.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := other.Engine(ctx); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		isrc := fmt.Sprintf("QZBEN%07d", i)
		word := fmt.Sprintf("zorblax%d", i)
		line := fmt.Sprintf(`{"isrc":%q,"title":"Track %s","artist":"Bench"}`, isrc, word)
		if _, err := a.Ingest(ctx, strings.NewReader(line), IngestOptions{}); err != nil {
			b.Fatal(err)
		}
		deadline := time.After(10 * time.Second) // a hang guard
		for {
			out, err := other.semanticSearch(ctx, SemanticSearchInput{Query: word, Limit: 1})
			if err != nil {
				b.Fatal(err)
			}
			if len(out.Tracks) == 1 && out.Tracks[0].ISRC == isrc {
				break
			}
			select {
			case <-refreshed: // search again after each notified refresh
			case <-deadline:
				b.Fatalf("%s not seen after 10 s", isrc)
			}
		}
	}
}
