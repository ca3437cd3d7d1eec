package music

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/index/weaviate"
	"github.com/toolport/toolport/internal/index/weaviate/weaviatetest"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/tool"
)

var collectionSeq atomic.Int64

// weaviateConfig points at node with a collection of the test's own.
func weaviateConfig(node *weaviatetest.Node) weaviate.Config {
	name := fmt.Sprintf("MusicTest%d_%d", time.Now().UnixNano(), collectionSeq.Add(1))
	return weaviate.Config{URL: node.URL(), GRPCAddr: node.GRPCAddr, Collection: name, Timeout: 20 * time.Second}
}

// TestSemanticSearchOnWeaviate holds semanticSearch to the same contract
// when Weaviate ranks: same results for the seed, filters and library flags.
func TestSemanticSearchOnWeaviate(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		cfg := weaviateConfig(c.Nodes[0])
		reg, svc := newServiceRegistry(t, db, []Option{WithWeaviate(cfg)})
		if svc.loadedEngine() != nil {
			t.Error("an in-memory engine was loaded although Weaviate holds the index")
		}
		checkSemanticSearch(t, reg)
		if err := svc.PingVectors(context.Background()); err != nil {
			t.Errorf("PingVectors: %v", err)
		}
	})
}

// TestWeaviateChangesAreSeenAtOnceByOtherReplicas: what one replica ingests
// is found by another's very next search, with no refresh and no poll.
func TestWeaviateChangesAreSeenAtOnceByOtherReplicas(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	eachBackendTwoHandles(t, func(t *testing.T, first, second *sqlstore.DB) {
		ctx := context.Background()
		cfg := weaviateConfig(c.Nodes[0])
		a := New(first, testEmbedder(t), nil, WithWeaviate(cfg), WithRefreshInterval(-1))
		b := New(second, testEmbedder(t), nil, WithWeaviate(cfg), WithRefreshInterval(-1))
		if _, err := a.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		fugue := SemanticSearchInput{Query: "baroque harpsichord fugue"}
		if got := isrcsFound(t, b, fugue); slices.Contains(got, "QZHAR0000001") {
			t.Fatalf("found %v before it was added", got)
		}
		added := `{"isrc":"QZHAR0000001","title":"Fugue in G minor","artist":"Bach","interpretation":"A baroque harpsichord fugue, intricate and bright"}`
		if _, err := a.Ingest(ctx, strings.NewReader(added), IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := isrcsFound(t, b, fugue); len(got) == 0 || got[0] != "QZHAR0000001" {
			t.Errorf("the other replica's next search: %v, want QZHAR0000001 first", got)
		}
		// Ingesting the same line again writes nothing new anywhere.
		st, err := a.Ingest(ctx, strings.NewReader(added), IngestOptions{})
		if err != nil || st.Unchanged != 1 {
			t.Errorf("re-ingest: %+v, %v", st, err)
		}
		vb, err := b.vectors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := vb.Count(ctx, ""); err != nil || n != 4 {
			t.Errorf("Weaviate holds %d tracks (%v), want 4", n, err)
		}
	})
}

// TestLoadPushesTheStoreToWeaviate: an index built before Weaviate was
// configured is written to it by Load (toolport serve's start).
func TestLoadPushesTheStoreToWeaviate(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		seed(t, db) // embedded, no Weaviate
		svc := New(db, testEmbedder(t), nil, WithWeaviate(weaviateConfig(c.Nodes[0])))
		out, err := svc.semanticSearch(ctx, SemanticSearchInput{Query: "melancholic piano", Limit: 10})
		if err != nil || len(out.Tracks) != 0 || !strings.Contains(out.Summary(), "the index is empty") {
			t.Fatalf("empty collection: %q, %v; want no tracks and the empty-index hint", out.Summary(), err)
		}
		if _, err := svc.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if got := isrcsFound(t, svc, SemanticSearchInput{Query: "melancholic piano"}); len(got) == 0 || got[0] != "AUNMG2400013" {
			t.Errorf("after Load: %v, want AUNMG2400013 first", got)
		}
		// A second Load finds the counts equal and writes nothing.
		_, written, err := svc.SyncVectors(ctx)
		if err != nil || written != 0 {
			t.Errorf("second sync wrote %d (%v), want 0", written, err)
		}
	})
}

// TestWeaviateDownIsARetryableToolError: the agent gets a short, retryable
// NETWORK_ERROR that names Weaviate and nothing of the network.
func TestWeaviateDownIsARetryableToolError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	db := openStore(t, "sqlite::memory:")
	cfg := weaviate.Config{URL: "http://" + addr, GRPCAddr: addr, Collection: "Down", Timeout: 2 * time.Second}
	reg, svc := newServiceRegistryNoSeed(t, db, WithWeaviate(cfg))
	res := call(t, reg, "semanticSearch", `{"query":"melancholic piano"}`, nil)
	if res.OK() || res.Err.Code != tool.CodeNetwork || !res.Err.Retryable {
		t.Fatalf("semanticSearch with Weaviate down: %s", res.JSON)
	}
	if msg := res.Err.Message; !strings.Contains(msg, "Weaviate") || strings.Contains(msg, addr) || len(msg) > 200 {
		t.Errorf("message %q: want a short one naming Weaviate and no address", msg)
	}
	if err := svc.PingVectors(context.Background()); err == nil {
		t.Error("PingVectors with Weaviate down: nil")
	}
	if _, err := svc.Ingest(context.Background(), strings.NewReader(seedJSONL), IngestOptions{}); err == nil {
		t.Error("Ingest with Weaviate down: nil error")
	}
	// Nothing reached the store: a later run writes both.
	if v, err := db.IndexVersion(context.Background()); err != nil || v.Count != 0 {
		t.Errorf("store holds %d records (%v) after a failed Weaviate write, want 0", v.Count, err)
	}
}

func newServiceRegistryNoSeed(t *testing.T, db *sqlstore.DB, opts ...Option) (*tool.Registry, *Service) {
	t.Helper()
	svc := New(db, testEmbedder(t), nil, opts...)
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	if err := reg.Register(Tools(svc)...); err != nil {
		t.Fatal(err)
	}
	return reg, svc
}

// TestSemanticSearchNegationOnWeaviate: with Weaviate ranking, "piano
// without vocals" finds the piano tracks without vocals first, not the
// vocal piano tracks that hold every word of the query; a query of only
// negations still answers with a note and no tracks.
func TestSemanticSearchNegationOnWeaviate(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	ctx := context.Background()
	db := openStore(t, storetest.DSN(t, storetest.SQLite))
	_, svc := newServiceRegistryNoSeed(t, db, WithWeaviate(weaviateConfig(c.Nodes[0])))
	tracks := `{"isrc":"QZNEG0000001","title":"Ballad for Two","artist":"Ada Lane","interpretation":"A piano ballad with soft female vocals; she sings over the piano."}
{"isrc":"QZNEG0000002","title":"Lament","artist":"Ben Ross","interpretation":"Male vocals and piano, a slow lament with a singer at the piano."}
{"isrc":"QZNEG0000003","title":"Nocturne","artist":"Clara Voss","interpretation":"A quiet solo piano nocturne, slow and reflective."}
{"isrc":"QZNEG0000004","title":"Etude","artist":"Dan Holt","interpretation":"A bright, fast piano etude."}
`
	if _, err := svc.Ingest(ctx, strings.NewReader(tracks), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	got := isrcsFound(t, svc, SemanticSearchInput{Query: "piano without vocals"})
	if len(got) < 2 || !slices.Contains([]string{"QZNEG0000003", "QZNEG0000004"}, got[0]) ||
		!slices.Contains([]string{"QZNEG0000003", "QZNEG0000004"}, got[1]) {
		t.Errorf("piano without vocals: %v, want QZNEG0000003 and QZNEG0000004 first", got)
	}
	out, err := svc.semanticSearch(ctx, SemanticSearchInput{Query: "no vocals", Limit: 10})
	if err != nil || len(out.Tracks) != 0 || !strings.Contains(out.Note, "only says what to leave out") {
		t.Errorf("no vocals: %d tracks, note %q, %v; want none and the note", len(out.Tracks), out.Note, err)
	}
}
