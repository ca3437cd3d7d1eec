package weaviate_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/index/weaviate"
	"github.com/toolport/toolport/internal/index/weaviate/weaviatetest"
)

// negationTracks are built so that searching a negated query's whole text
// ranks first a track with what it negates: it holds every word of the
// query.
var negationTracks = []struct {
	isrc string
	f    index.Fields
}{
	{"NEG000000001", index.Fields{Title: "Ballad for Two", Artist: "Ada Lane", Interpretation: "A piano ballad with soft female vocals; she sings over the piano."}},
	{"NEG000000002", index.Fields{Title: "Lament", Artist: "Ben Ross", Interpretation: "Male vocals and piano, a slow lament with a singer at the piano."}},
	{"NEG000000003", index.Fields{Title: "Nocturne", Artist: "Clara Voss", Interpretation: "A quiet solo piano nocturne, slow and reflective."}},
	{"NEG000000004", index.Fields{Title: "Etude", Artist: "Dan Holt", Interpretation: "A bright, fast piano etude."}},
	{"NEG000000005", index.Fields{Title: "Smooth", Artist: "Eve Marsh", Interpretation: "Smooth vocals over a jazz band."}},
	{"NEG000000006", index.Fields{Title: "Sunny Day", Artist: "Finn Gale", Interpretation: "A happy, cheerful pop song with handclaps."}},
	{"NEG000000007", index.Fields{Title: "Turning", Artist: "Gia Moss", Interpretation: "A happy song that turns sad: the happy verse gives way to a sad chorus."}},
	{"NEG000000008", index.Fields{Title: "Grey", Artist: "Hal Stone", Interpretation: "A sad, slow song."}},
}

// TestSearchNegation: a negated query ("piano without vocals") searches its
// kept words and demotes the tracks that hold a negated one, over REST and
// gRPC. Searching the whole text, as the backend did before, ranks a track
// with the negated word first.
func TestSearchNegation(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	ctx := context.Background()
	emb, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(negationTracks))
	for i, tr := range negationTracks {
		texts[i] = index.EmbeddingText(tr.f)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]weaviate.Track, len(negationTracks))
	for i, tr := range negationTracks {
		docs[i] = weaviate.Track{ISRC: tr.isrc, Fields: tr.f, Vector: vecs[i], Embedder: emb.Name()}
	}
	tests := []struct {
		query string
		// wantFirst lists the tracks any of which may rank first; without
		// lists the tracks with a negated word, below every other track
		// with a kept word (the first len(wantFirst) hits).
		wantFirst, without []string
	}{
		{"piano without vocals", []string{"NEG000000003", "NEG000000004"}, []string{"NEG000000001", "NEG000000002", "NEG000000005"}},
		{"a happy song, not sad", []string{"NEG000000006"}, []string{"NEG000000007", "NEG000000008"}},
	}
	for i, path := range []struct{ name, grpc string }{{"graphql", ""}, {"grpc", c.Nodes[0].GRPCAddr}} {
		t.Run(path.name, func(t *testing.T) {
			b := weaviatetest.Load(t, weaviate.Config{URL: c.Nodes[0].URL(), GRPCAddr: path.grpc, Collection: fmt.Sprintf("Negation%d", i), Timeout: 20 * time.Second}, docs)
			for _, tt := range tests {
				whole := search(t, b, emb, tt.query, len(docs))
				if len(whole) == 0 || !slices.Contains(tt.without, whole[0].ID) {
					t.Fatalf("%q, whole text searched: %v; the set no longer shows the failure (want one of %v first)", tt.query, ids(whole), tt.without)
				}
				kept, negated := index.DropNegation(tt.query)
				vs, err := emb.Embed(ctx, []string{kept})
				if err != nil {
					t.Fatal(err)
				}
				hits, err := b.Search(ctx, weaviate.Query{Text: kept, Negated: negated, Vector: vs[0], Embedder: emb.Name(), K: len(docs)})
				if err != nil {
					t.Fatalf("%q: %v", tt.query, err)
				}
				got := ids(hits)
				if len(got) == 0 || !slices.Contains(tt.wantFirst, got[0]) {
					t.Errorf("%q: %v, want one of %v first", tt.query, got, tt.wantFirst)
				}
				for _, id := range got[:min(len(got), len(tt.wantFirst))] {
					if slices.Contains(tt.without, id) {
						t.Errorf("%q: %v, %s (negated word) in the first %d", tt.query, got, id, len(tt.wantFirst))
					}
				}
				// K is still the cut: the pool is ranked deeper, not returned.
				if top, err := b.Search(ctx, weaviate.Query{Text: kept, Negated: negated, Vector: vs[0], Embedder: emb.Name(), K: 1}); err != nil ||
					len(top) != 1 || top[0].ID != got[0] {
					t.Errorf("%q with K 1: %v, %v; want [%s]", tt.query, ids(top), err, got[0])
				}
			}
		})
	}
}
