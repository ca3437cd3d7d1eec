package music

import (
	"context"
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
	if _, err := a.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	fugue := SemanticSearchInput{Query: "baroque harpsichord fugue"}
	if got := isrcsFound(t, b, fugue); slices.Contains(got, "QZHAR0000001") {
		t.Fatalf("found %v before it was added", got)
	}
	// b's engine is loaded: it listens from now on.
	eventually := func(what string, ok func([]string) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := isrcsFound(t, b, fugue)
			if ok(got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: b still finds %v after 10 s (the poll is an hour away)", what, got)
			}
			time.Sleep(20 * time.Millisecond)
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
