package index

import (
	"context"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

func TestMoodTargets(t *testing.T) {
	tests := []struct {
		query string
		want  []MoodTarget
	}{
		{"something joyful to dance to", []MoodTarget{{"valence", true, "joyful"}, {"energy", true, "joyful"}, {"danceability", true, "dance"}}},
		{"mournful strings", []MoodTarget{{"valence", false, "mournful"}}},
		{"Calm ACOUSTIC guitar", []MoodTarget{{"energy", false, "calm"}, {"acousticness", true, "acoustic"}}},
		{"angry and loud", []MoodTarget{{"valence", false, "angry"}, {"energy", true, "angry"}}},
		{"not sad", nil},
		{"don't want anything loud", nil},
		{"without vocals, instrumental", []MoodTarget{{"instrumentalness", true, "instrumental"}}},
		{"no drums, nothing sad, just happy", []MoodTarget{{"valence", true, "happy"}, {"energy", true, "happy"}}},
		{"happy or sad", []MoodTarget{{"energy", true, "happy"}}},
		{"a calm but energetic song", nil},
		{"jazz with a saxophone", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := MoodTargets(tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("MoodTargets(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}

func values(m map[string]float64) FeatureValue {
	return func(f string) (float64, bool) {
		v, ok := m[f]
		return v, ok
	}
}

func TestMoodFit(t *testing.T) {
	happy := MoodTargets("happy")
	tests := []struct {
		name     string
		targets  []MoodTarget
		features map[string]float64
		want     float64
		why      string
	}{
		{"no features", happy, nil, 0, ""},
		{"other features only", happy, map[string]float64{"acousticness": 0.9}, 0, ""},
		{"perfect fit", happy, map[string]float64{"valence": 1, "energy": 1}, MoodWeight, "valence 1.00, energy 1.00"},
		{"perfect misfit", happy, map[string]float64{"valence": 0, "energy": 0}, -MoodWeight, "valence 0.00, energy 0.00"},
		{"middle of the scales", happy, map[string]float64{"valence": 0.5, "energy": 0.5}, 0, "valence 0.50, energy 0.50"},
		{"one of two known", happy, map[string]float64{"energy": 0.91}, MoodWeight * 0.82, "energy 0.91"},
		{"low target", MoodTargets("sad"), map[string]float64{"valence": 0.2}, MoodWeight * 0.6, "valence 0.20"},
		{"out of range is clamped", happy, map[string]float64{"valence": 7, "energy": -3}, 0, "valence 1.00, energy 0.00"},
		{"NaN is unknown", happy, map[string]float64{"valence": math.NaN(), "energy": 1}, MoodWeight, "energy 1.00"},
		{"no targets", nil, map[string]float64{"valence": 1}, 0, ""},
	}
	if got, why := MoodFit(happy, nil); got != 0 || why != "" {
		t.Errorf("MoodFit of a track without features = %v, %q; want 0, \"\"", got, why)
	}
	for _, tt := range tests {
		got, why := MoodFit(tt.targets, values(tt.features))
		if math.Abs(got-tt.want) > 1e-12 || why != tt.why {
			t.Errorf("%s: MoodFit = %v, %q; want %v, %q", tt.name, got, why, tt.want, tt.why)
		}
		if math.Abs(got) > MoodWeight+1e-12 {
			t.Errorf("%s: |adjustment| %v above MoodWeight", tt.name, got)
		}
	}
}

// constructedTracks is a CONSTRUCTED set (not from any data set): three
// tracks with the same caption and different audio features (one has none),
// among others with other captions.
var constructedTracks = []struct {
	doc      Document
	features map[string]float64
}{
	{Document{ID: "CONSTR000001", Fields: Fields{Title: "Grey", Interpretation: "A song with piano and a soft voice, recorded in a small room."}},
		map[string]float64{"valence": 0.10, "energy": 0.20, "danceability": 0.30, "acousticness": 0.90}},
	{Document{ID: "CONSTR000002", Fields: Fields{Title: "Gold", Interpretation: "A song with piano and a soft voice, recorded in a small room at night."}},
		map[string]float64{"valence": 0.90, "energy": 0.80, "danceability": 0.85, "acousticness": 0.20}},
	{Document{ID: "CONSTR000003", Fields: Fields{Title: "Blue", Interpretation: "A song with piano and a soft voice, recorded in a small room."}}, nil},
	{Document{ID: "CONSTR000004", Fields: Fields{Title: "Iron", Interpretation: "A heavy metal band with distorted guitars and fast drums."}},
		map[string]float64{"valence": 0.30, "energy": 0.97, "danceability": 0.40, "acousticness": 0.01}},
	{Document{ID: "CONSTR000005", Fields: Fields{Title: "Waltz", Interpretation: "An orchestra plays a waltz with strings and horns."}},
		map[string]float64{"valence": 0.60, "energy": 0.35, "danceability": 0.50, "acousticness": 0.80}},
	{Document{ID: "CONSTR000006", Fields: Fields{Title: "Low", Interpretation: "A drum and bass track with a deep bassline and a piano sample."}},
		map[string]float64{"valence": 0.50, "energy": 0.90, "danceability": 0.75, "acousticness": 0.05}},
}

func constructedFeatures(id string) FeatureValue {
	for _, c := range constructedTracks {
		if c.doc.ID == id && c.features != nil {
			return values(c.features)
		}
	}
	return nil
}

func position(hits []Hit, id string) int {
	return slices.IndexFunc(hits, func(h Hit) bool { return h.ID == id })
}

func scoreOf(hits []Hit, id string) float64 {
	return hits[position(hits, id)].Score
}

// TestRerankByMoodConstructed: on the CONSTRUCTED set, the text ranks the
// sad, quiet "Grey" above the bright "Gold" (whose caption is longer) by a
// margin a real top 10 has between neighbours; a query that names a
// happy mood puts "Gold" above "Grey", a sad one keeps "Grey" above, a negated mood
// changes nothing, and "Blue", without features, keeps its score.
func TestRerankByMoodConstructed(t *testing.T) {
	wv, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(wv)
	var docs []Document
	for _, c := range constructedTracks {
		docs = append(docs, c.doc)
	}
	if err := e.Add(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	const grey, gold, blue = "CONSTR000001", "CONSTR000002", "CONSTR000003"
	tests := []struct {
		query        string
		above, below string
		unchanged    bool // the ranking is the text's
	}{
		{"a happy song with piano and voice", gold, grey, false},
		{"upbeat piano song to dance to", gold, grey, false},
		{"a sad song with piano and voice", grey, gold, false},
		{"a calm acoustic song with piano and voice", grey, gold, false},
		{"a song with piano and voice, not happy", grey, gold, true},
		{"a song with piano and voice", grey, gold, true},
	}
	for _, tt := range tests {
		plain, err := e.Search(context.Background(), tt.query, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if position(plain, grey) > position(plain, gold) {
			t.Fatalf("%q: the text ranks Gold above Grey: the constructed set no longer sets up the case: %v", tt.query, plain)
		}
		if gap := scoreOf(plain, grey) - scoreOf(plain, gold); gap >= 2*MoodWeight {
			t.Fatalf("%q: text gap Grey−Gold %.3f: no adjustment could reorder them", tt.query, gap)
		}
		got := RerankByMood(plain, MoodTargets(tt.query), constructedFeatures)
		if position(got, tt.above) > position(got, tt.below) {
			t.Errorf("%q: %s ranks below %s: %v", tt.query, tt.above, tt.below, got)
		}
		if tt.unchanged && !slices.Equal(got, plain) {
			t.Errorf("%q: ranking changed with no mood asked: %v, was %v", tt.query, got, plain)
		}
		if scoreOf(got, blue) != scoreOf(plain, blue) {
			t.Errorf("%q: Blue, without features, went from %v to %v", tt.query, scoreOf(plain, blue), scoreOf(got, blue))
		}
	}
}

// TestMoodLeavesMusicCapsUnchanged: MusicCaps tracks have no audio
// features, so the mood adjustment must leave every dev and own held-out
// ranking, and so the dev and cross-validated figures, as they are, also for
// the queries that name a mood. It also measures the score gaps in a top 10
// that MoodWeight is set against.
func TestMoodLeavesMusicCapsUnchanged(t *testing.T) {
	e, ds := buildMusicCaps(t)
	var queries []string
	for _, q := range ds.queries {
		queries = append(queries, q.Text)
	}
	for _, q := range loadHeldout(t) {
		queries = append(queries, q.Text)
	}
	noFeatures := func(string) FeatureValue { return nil }
	var gap10, gap5 []float64
	moods := 0
	for _, q := range queries {
		hits, err := e.Search(context.Background(), q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		targets := MoodTargets(q)
		if len(targets) > 0 {
			moods++
		}
		if got := RerankByMood(hits, targets, noFeatures); !slices.Equal(got, hits) {
			t.Errorf("%q: the ranking changed without features", q)
		}
		if len(hits) == 10 {
			gap10 = append(gap10, hits[0].Score-hits[9].Score)
			gap5 = append(gap5, hits[4].Score-hits[9].Score)
		}
	}
	if moods == 0 {
		t.Error("no query names a mood: the check above checks nothing")
	}
	m10, m5 := median(gap10), median(gap5)
	t.Logf("%d of %d queries name a mood; median score gap 1st→10th %.3f, 5th→10th %.3f; MoodWeight %.2f", moods, len(queries), m10, m5, MoodWeight)
	// The full swing (a perfect fit against a perfect misfit) stays well
	// inside a typical top 10's spread.
	if 2*MoodWeight > m10/2 {
		t.Errorf("2·MoodWeight = %.2f is more than half the median top-10 spread %.3f", 2*MoodWeight, m10)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

func TestMoodWordsAreTheRecognisedWords(t *testing.T) {
	words := MoodWords()
	if !slices.IsSorted(words) || len(words) == 0 {
		t.Fatalf("MoodWords = %v, want a sorted, non-empty list", words)
	}
	for _, w := range words {
		if len(MoodTargets(w)) == 0 {
			t.Errorf("%q is offered as a mood but moves no feature", w)
		}
	}
	if !slices.Contains(words, "melancholic") {
		t.Errorf("MoodWords lacks melancholic: %v", words)
	}
}
