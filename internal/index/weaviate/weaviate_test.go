package weaviate_test

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/index/weaviate"
	"github.com/toolport/toolport/internal/index/weaviate/weaviatetest"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    weaviate.Config
		wantErr string
	}{
		{"unset is disabled", nil, weaviate.Config{}, ""},
		{"defaults", map[string]string{"TOOLPORT_VECTOR_URL": "http://127.0.0.1:8080"},
			weaviate.Config{URL: "http://127.0.0.1:8080", Collection: "ToolportTrack", Replication: 1, Consistency: "QUORUM",
				Timeout: 10 * time.Second, Alpha: 0.2}, ""},
		{"everything", map[string]string{"TOOLPORT_VECTOR_URL": "https://wv.internal:443", "TOOLPORT_WEAVIATE_GRPC_ADDR": "wv.internal:50051",
			"TOOLPORT_WEAVIATE_COLLECTION": "Tracks2", "TOOLPORT_WEAVIATE_REPLICATION": "3", "TOOLPORT_WEAVIATE_SHARDS": "6",
			"TOOLPORT_WEAVIATE_CONSISTENCY": "one", "TOOLPORT_WEAVIATE_TIMEOUT": "3s", "TOOLPORT_WEAVIATE_API_KEY": "k3y"},
			weaviate.Config{URL: "https://wv.internal:443", GRPCAddr: "wv.internal:50051", Collection: "Tracks2", Replication: 3, Shards: 6,
				Consistency: "ONE", APIKey: "k3y", Timeout: 3 * time.Second, Alpha: 0.2}, ""},
		{"URL without scheme", map[string]string{"TOOLPORT_VECTOR_URL": "127.0.0.1:8080"}, weaviate.Config{}, "TOOLPORT_VECTOR_URL"},
		{"URL with a path", map[string]string{"TOOLPORT_VECTOR_URL": "http://h:8080/v1"}, weaviate.Config{}, "TOOLPORT_VECTOR_URL"},
		{"URL with credentials", map[string]string{"TOOLPORT_VECTOR_URL": "http://u:hunter2@h:8080"}, weaviate.Config{}, "TOOLPORT_VECTOR_URL"},
		{"several nodes", map[string]string{"TOOLPORT_VECTOR_URL": "http://a:8080, http://b:8080", "TOOLPORT_WEAVIATE_GRPC_ADDR": "a:50051,b:50051"},
			weaviate.Config{URL: "http://a:8080, http://b:8080", GRPCAddr: "a:50051,b:50051", Collection: "ToolportTrack", Replication: 1,
				Consistency: "QUORUM", Timeout: 10 * time.Second, Alpha: 0.2}, ""},
		{"gRPC addresses not one per URL", map[string]string{"TOOLPORT_VECTOR_URL": "http://a:8080,http://b:8080", "TOOLPORT_WEAVIATE_GRPC_ADDR": "a:50051"}, weaviate.Config{}, "TOOLPORT_WEAVIATE_GRPC_ADDR"},
		{"gRPC address without port", map[string]string{"TOOLPORT_VECTOR_URL": "http://h:8080", "TOOLPORT_WEAVIATE_GRPC_ADDR": "h"}, weaviate.Config{}, "TOOLPORT_WEAVIATE_GRPC_ADDR"},
		{"replication not a number", map[string]string{"TOOLPORT_VECTOR_URL": "http://h:8080", "TOOLPORT_WEAVIATE_REPLICATION": "three"}, weaviate.Config{}, "TOOLPORT_WEAVIATE_REPLICATION"},
		{"replication zero", map[string]string{"TOOLPORT_VECTOR_URL": "http://h:8080", "TOOLPORT_WEAVIATE_REPLICATION": "0"}, weaviate.Config{}, "TOOLPORT_WEAVIATE_REPLICATION"},
		{"bad consistency", map[string]string{"TOOLPORT_VECTOR_URL": "http://h:8080", "TOOLPORT_WEAVIATE_CONSISTENCY": "MOST"}, weaviate.Config{}, "TOOLPORT_WEAVIATE_CONSISTENCY"},
		{"bad collection", map[string]string{"TOOLPORT_VECTOR_URL": "http://h:8080", "TOOLPORT_WEAVIATE_COLLECTION": "tracks; drop"}, weaviate.Config{}, "TOOLPORT_WEAVIATE_COLLECTION"},
		{"bad timeout", map[string]string{"TOOLPORT_VECTOR_URL": "http://h:8080", "TOOLPORT_WEAVIATE_TIMEOUT": "10"}, weaviate.Config{}, "TOOLPORT_WEAVIATE_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.New(func(k string) string { return tt.env[k] }, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			got, err := weaviate.ConfigFromEnv(c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("err = %v: quotes a password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestObjectIDIsDeterministic(t *testing.T) {
	a, b := weaviate.ObjectID("USRC17607839"), weaviate.ObjectID("USRC17607839")
	if a != b || a == weaviate.ObjectID("USRC17607840") {
		t.Fatalf("ObjectID: %s, %s", a, b)
	}
}

// tracks are three tracks far apart in topic, embedded by the offline
// default embedder.
var tracks = []struct {
	isrc string
	f    index.Fields
	feat map[string]float64
}{
	{"AAA000000001", index.Fields{Title: "Moonlight Lullaby", Artist: "Nora Keys", Interpretation: "a calm, gentle piano lullaby for falling asleep at night"},
		map[string]float64{"energy": 0.1, "tempo": 60}},
	{"AAA000000002", index.Fields{Title: "Iron Storm", Artist: "Blackforge", Interpretation: "aggressive heavy metal with distorted guitar riffs and pounding drums"},
		map[string]float64{"energy": 0.95, "tempo": 170}},
	{"AAA000000003", index.Fields{Title: "Club Lights", Artist: "DJ Volta", Interpretation: "upbeat electronic dance track for the club with a driving synth bass"},
		nil},
}

func embedTracks(t *testing.T, emb embedding.Embedder) []weaviate.Track {
	t.Helper()
	var texts []string
	for _, tr := range tracks {
		texts = append(texts, index.EmbeddingText(tr.f))
	}
	vecs, err := emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]weaviate.Track, len(tracks))
	for i, tr := range tracks {
		out[i] = weaviate.Track{ISRC: tr.isrc, Fields: tr.f, Vector: vecs[i], Embedder: emb.Name(), Features: tr.feat}
	}
	return out
}

func openBackend(t *testing.T, url, grpcAddr string, rf int) *weaviate.Backend {
	t.Helper()
	b, err := weaviate.Open(weaviate.Config{URL: url, GRPCAddr: grpcAddr, Replication: rf, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func search(t *testing.T, b *weaviate.Backend, emb embedding.Embedder, text string, k int, bounds ...weaviate.Bound) []index.Hit {
	t.Helper()
	vs, err := emb.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := b.Search(context.Background(), weaviate.Query{Text: text, Vector: vs[0], Embedder: emb.Name(), K: k, Bounds: bounds})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	return hits
}

func ids(hits []index.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func count(t *testing.T, b *weaviate.Backend) int {
	t.Helper()
	n, err := b.Count(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBackendOnOneNode(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	ctx := context.Background()
	emb, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	// REST writes and gRPC writes must behave alike.
	for _, tc := range []struct{ name, grpc string }{{"rest", ""}, {"grpc", c.Nodes[0].GRPCAddr}} {
		t.Run(tc.name, func(t *testing.T) {
			b := openBackend(t, c.Nodes[0].URL(), tc.grpc, 1)
			if err := b.Ping(ctx); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			for range 2 { // creating twice is a no-op
				if err := b.EnsureCollection(ctx); err != nil {
					t.Fatalf("EnsureCollection: %v", err)
				}
			}
			if _, err := b.Delete(ctx, []string{"AAA000000001", "AAA000000002", "AAA000000003"}); err != nil {
				t.Fatal(err)
			}
			docs := embedTracks(t, emb)
			if err := b.Upsert(ctx, docs); err != nil {
				t.Fatalf("Upsert: %v", err)
			}
			if n := count(t, b); n != 3 {
				t.Fatalf("Count after upsert = %d, want 3", n)
			}
			// The same tracks again, one of them changed: still three objects.
			docs[2].Fields.Title = "Club Lights (Extended Mix)"
			if err := b.Upsert(ctx, docs); err != nil {
				t.Fatalf("re-Upsert: %v", err)
			}
			if n := count(t, b); n != 3 {
				t.Fatalf("Count after re-upsert = %d, want 3 (upserts must be idempotent)", n)
			}
			if n, err := b.Count(ctx, emb.Name()); err != nil || n != 3 {
				t.Errorf("Count of %s = %d (%v), want 3", emb.Name(), n, err)
			}
			if n, err := b.Count(ctx, "another-model"); err != nil || n != 0 {
				t.Errorf("Count of another-model = %d (%v), want 0", n, err)
			}

			// Lexical: a word only one track has.
			if got := ids(search(t, b, emb, "distorted guitars", 3)); len(got) == 0 || got[0] != "AAA000000002" {
				t.Errorf("lexical query: got %v, want AAA000000002 first", got)
			}
			// Vector: no word in common with any track, near in meaning.
			if got := ids(search(t, b, emb, "soothing bedtime melody", 3)); len(got) == 0 || got[0] != "AAA000000001" {
				t.Errorf("vector query: got %v, want AAA000000001 first", got)
			}
			// Only stopwords: ranked by the vector alone, still answers.
			if got := search(t, b, emb, "the of and", 3); len(got) != 3 {
				t.Errorf("stopword query: %d hits, want 3", len(got))
			}
			// Feature bounds: a track without the feature never passes.
			calm := search(t, b, emb, "music", 3, weaviate.Bound{Feature: "energy", Min: math.Inf(-1), Max: 0.5})
			if got := ids(calm); len(got) != 1 || got[0] != "AAA000000001" {
				t.Errorf("energy ≤ 0.5: got %v, want [AAA000000001]", got)
			}
			fast := search(t, b, emb, "music", 3, weaviate.Bound{Feature: "tempo", Min: 100, Max: math.Inf(1)})
			if got := ids(fast); len(got) != 1 || got[0] != "AAA000000002" {
				t.Errorf("tempo ≥ 100: got %v, want [AAA000000002]", got)
			}
			// Another embedder's vectors are not searched.
			vs, _ := emb.Embed(ctx, []string{"piano"})
			other, err := b.Search(ctx, weaviate.Query{Text: "piano", Vector: vs[0], Embedder: "another-model", K: 3})
			if err != nil || len(other) != 0 {
				t.Errorf("other embedder: %v, %v; want no hits", other, err)
			}

			n, err := b.Delete(ctx, []string{"AAA000000002", "NOTSTORED001"})
			if err != nil || n != 1 {
				t.Fatalf("Delete = %d, %v; want 1", n, err)
			}
			if got := ids(search(t, b, emb, "distorted guitars", 3)); strings.Contains(strings.Join(got, ","), "AAA000000002") {
				t.Errorf("deleted track still found: %v", got)
			}
			if n := count(t, b); n != 2 {
				t.Errorf("Count after delete = %d, want 2", n)
			}
		})
	}
}

// TestAPIKey: against a Weaviate that requires an API key, the key opens
// every operation over REST and gRPC, and its absence is refused, not
// taken for an outage.
func TestAPIKey(t *testing.T) {
	c := weaviatetest.StartWith(t, 1, map[string]string{
		"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "false",
		"AUTHENTICATION_APIKEY_ENABLED":           "true",
		"AUTHENTICATION_APIKEY_ALLOWED_KEYS":      "test-key-1",
		"AUTHENTICATION_APIKEY_USERS":             "toolport",
	})
	ctx := context.Background()
	emb, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	anon := openBackend(t, c.Nodes[0].URL(), "", 1)
	if err := anon.EnsureCollection(ctx); err == nil || errors.Is(err, weaviate.ErrUnavailable) {
		t.Errorf("without the key: %v, want a refusal that is not ErrUnavailable", err)
	}
	for _, grpcAddr := range []string{"", c.Nodes[0].GRPCAddr} {
		b, err := weaviate.Open(weaviate.Config{URL: c.Nodes[0].URL(), GRPCAddr: grpcAddr, APIKey: "test-key-1", Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.EnsureCollection(ctx); err != nil {
			t.Fatalf("grpc=%q EnsureCollection with the key: %v", grpcAddr, err)
		}
		if err := b.Upsert(ctx, embedTracks(t, emb)); err != nil {
			t.Fatalf("grpc=%q Upsert with the key: %v", grpcAddr, err)
		}
		if got := ids(search(t, b, emb, "distorted guitars", 3)); len(got) == 0 || got[0] != "AAA000000002" {
			t.Errorf("grpc=%q search with the key: %v", grpcAddr, got)
		}
	}
}

func TestBackendDownIsUnavailable(t *testing.T) {
	// A port that was free a moment ago: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, grpcAddr := range []string{"", addr} {
		b := openBackend(t, "http://"+addr, grpcAddr, 1)
		ctx := context.Background()
		start := time.Now()
		checks := map[string]error{"Ping": b.Ping(ctx), "EnsureCollection": b.EnsureCollection(ctx)}
		_, checks["Search"] = b.Search(ctx, weaviate.Query{Text: "piano", Vector: []float32{1, 0}, Embedder: "e", K: 3})
		checks["Upsert"] = b.Upsert(ctx, []weaviate.Track{{ISRC: "AAA000000001", Vector: []float32{1, 0}, Embedder: "e"}})
		_, checks["Delete"] = b.Delete(ctx, []string{"AAA000000001"})
		for op, err := range checks {
			if !errors.Is(err, weaviate.ErrUnavailable) {
				t.Errorf("grpc=%q %s with Weaviate down: %v, want ErrUnavailable", grpcAddr, op, err)
			}
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("failing took %v: a refused connection must fail fast", d)
		}
	}
}

// TestReplicatedClusterSurvivesANode writes to a 3-node cluster with
// replication factor 3 through a backend that knows every node, kills the
// node it was talking to, and keeps searching and writing at QUORUM.
func TestReplicatedClusterSurvivesANode(t *testing.T) {
	c := weaviatetest.Start(t, 3)
	ctx := context.Background()
	emb, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	var grpcs []string
	for _, n := range c.Nodes {
		grpcs = append(grpcs, n.GRPCAddr)
	}
	b := openBackend(t, strings.Join(c.URLs(), ","), strings.Join(grpcs, ","), 3)
	rest := openBackend(t, strings.Join(c.URLs(), ","), "", 3)
	if err := b.EnsureCollection(ctx); err != nil {
		t.Fatal(err)
	}
	docs := embedTracks(t, emb)
	if err := b.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	c.Nodes[0].Kill() // the node both backends were talking to
	killed := time.Now()
	// Until its failure detector marks node1 dead (seconds; longer on a
	// loaded machine), Weaviate 1.28 may answer a search without the part
	// it routes to node1, and no error: with no hits, or (the collection has
	// a shard per node) with another shard's hits only, seen as
	// [AAA000000001] alone in one CI run. Nothing in such an answer tells it
	// from a whole one on a real collection (it still has k hits), so the
	// backend cannot fail over on it as it does on an empty one
	// (searchNodes). Searches must find the track first again within a
	// bound; how long the gap lasted and what came back meanwhile is logged.
	// The bound is generous: under a loaded CI run (race-instrumented tests
	// on two cores) gRPC at QUORUM once still answered empty 60 s after the
	// kill, and once 180 s after it, while alone on the machine it recovers
	// within 100 ms.
	for name, be := range map[string]*weaviate.Backend{"gRPC at QUORUM": b, "GraphQL": rest} {
		var partial [][]string
		for {
			got := ids(search(t, be, emb, "distorted guitars", 3))
			if len(got) > 0 && got[0] == "AAA000000002" {
				t.Logf("%s with node1 down: found %v after the kill; answers without it before: %v", name, time.Since(killed).Round(time.Millisecond), partial)
				break
			}
			if time.Since(killed) > 180*time.Second {
				t.Fatalf("%s with node1 down: got %v, want AAA000000002 first (answers before: %v)", name, got, partial)
			}
			if len(partial) < 20 {
				partial = append(partial, got)
			}
			pollAgain(200 * time.Millisecond)
		}
	}
	if err := b.Ping(ctx); err != nil {
		t.Errorf("Ping with node1 down: %v", err)
	}
	// A write at QUORUM succeeds with 2 of 3 replicas and is read back.
	// Until the failure detector marks the killed node (seconds), a write
	// may wait for it and time out: that is a retryable ErrUnavailable.
	docs[0].Fields.Title = "Moonlight Lullaby (Reprise)"
	docs[0].Fields.Interpretation += " with a celesta"
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := b.Upsert(ctx, docs[:1])
		if err == nil {
			t.Logf("QUORUM write with node1 down: attempt %d took %v", attempt, time.Since(start))
			break
		}
		if !errors.Is(err, weaviate.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("upsert with node1 down, attempt %d: %v", attempt, err)
		}
	}
	for _, n := range c.Nodes[1:] {
		one := openBackend(t, n.URL(), n.GRPCAddr, 3)
		if got := ids(search(t, one, emb, "celesta", 3)); len(got) == 0 || got[0] != "AAA000000001" {
			t.Errorf("write with node1 down not read back at QUORUM via %s: %v", n.Name, got)
		}
	}

	// With a second node down, one replica of three is left: no longer a
	// quorum, so the QUORUM backend is unavailable (once node3 notices),
	// while a backend reading at ONE is still served.
	c.Nodes[1].Kill()
	one, err := weaviate.Open(weaviate.Config{URL: strings.Join(c.URLs(), ","), Replication: 3,
		Consistency: weaviate.ConsistencyOne, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(60 * time.Second)
	for {
		err := b.Ping(ctx)
		if errors.Is(err, weaviate.ErrUnavailable) {
			t.Logf("QUORUM Ping with two of three nodes down: %v", err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("QUORUM Ping with two of three nodes down: %v, want ErrUnavailable", err)
		}
		pollAgain(500 * time.Millisecond)
	}
	if err := one.Ping(ctx); err != nil {
		t.Errorf("Ping at consistency ONE with one node left: %v", err)
	}
}

// pollAgain pauses before asking the Weaviate cluster again how it serves
// with a node down: its failure detector runs on its own clock, in other
// processes, and what it decided is seen only by asking.
func pollAgain(d time.Duration) { time.Sleep(d) }
