package music

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/index/weaviate/weaviatetest"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// moodJSONL is CONSTRUCTED (not from any data set): three tracks with the
// same caption and different audio features; Blue has none.
const moodJSONL = `{"isrc":"QZCON0000001","title":"Grey","artist":"Constructed","interpretation":"A song with piano and a soft voice, recorded in a small room.","audioFeatures":{"valence":0.1,"energy":0.2,"danceability":0.3,"acousticness":0.9}}
{"isrc":"QZCON0000002","title":"Gold","artist":"Constructed","interpretation":"A song with piano and a soft voice, recorded in a small room.","audioFeatures":{"valence":0.9,"energy":0.8,"danceability":0.85,"acousticness":0.2}}
{"isrc":"QZCON0000003","title":"Blue","artist":"Constructed","interpretation":"A song with piano and a soft voice, recorded in a small room."}
`

// checkMoodSearch: a query that names a mood reorders tracks of similar
// text by their audio features, either way, and says which it weighed; a
// query without one, or with a negated one, weighs none; a track without
// features is shown without them.
func checkMoodSearch(t *testing.T, svc *Service) {
	t.Helper()
	if _, err := svc.Ingest(context.Background(), strings.NewReader(moodJSONL), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	const grey, gold, blue = "QZCON0000001", "QZCON0000002", "QZCON0000003"
	tests := []struct {
		query        string
		above, below string
		features     map[string]string // isrc → matchedFeatures
	}{
		{"a song with piano and voice", "", "", map[string]string{grey: "", gold: "", blue: ""}},
		{"a song with piano and voice, not happy", "", "", map[string]string{grey: "", gold: ""}},
		{"a happy song with piano and voice", gold, grey,
			map[string]string{grey: "valence 0.10, energy 0.20", gold: "valence 0.90, energy 0.80", blue: ""}},
		{"a sad song with piano and voice", grey, gold, map[string]string{grey: "valence 0.10", gold: "valence 0.90"}},
		{"piano and voice to dance to", gold, grey, map[string]string{gold: "danceability 0.85"}},
	}
	for _, tt := range tests {
		out, err := svc.semanticSearch(context.Background(), SemanticSearchInput{Query: tt.query, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		got := map[string]string{}
		score := map[string]float64{}
		for _, tr := range out.Tracks {
			order = append(order, tr.ISRC)
			got[tr.ISRC], score[tr.ISRC] = tr.MatchedFeatures, *tr.Score
			if *tr.Score < 0 || *tr.Score > 1 {
				t.Errorf("%q: %s score %v outside 0–1", tt.query, tr.ISRC, *tr.Score)
			}
		}
		if tt.above == "" {
			// The text alone: Grey and Gold are level.
			if d := math.Abs(score[grey] - score[gold]); d > 0.02 {
				t.Errorf("%q: Grey and Gold differ by %.3f on the text alone: the constructed case is off", tt.query, d)
			}
		} else if a, b := slices.Index(order, tt.above), slices.Index(order, tt.below); a < 0 || b < 0 || a > b {
			t.Errorf("%q: order %v, want %s above %s", tt.query, order, tt.above, tt.below)
		}
		for isrc, want := range tt.features {
			if got[isrc] != want {
				t.Errorf("%q: %s matchedFeatures %q, want %q", tt.query, isrc, got[isrc], want)
			}
		}
	}
}

func TestSemanticSearchMood(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		_, svc := newServiceRegistry(t, db, nil)
		checkMoodSearch(t, svc)
	})
}

func TestSemanticSearchMoodOnWeaviate(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		_, svc := newServiceRegistry(t, db, []Option{WithWeaviate(weaviateConfig(c.Nodes[0]))})
		checkMoodSearch(t, svc)
	})
}
