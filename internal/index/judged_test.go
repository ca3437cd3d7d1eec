package index

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

// judgedQuery is one of the project's judged queries of every kind
// (testdata/judged-queries.jsonl; the rule is in testdata/README.md).
type judgedQuery struct {
	ID     string     `json:"id"`
	Fold   int        `json:"fold"`
	Kind   string     `json:"kind"`
	Text   string     `json:"text"`
	Groups [][]string `json:"groups"`
	// Exclude lists patterns whose match outside a negation makes a track
	// irrelevant: what a negated query asks to be without.
	Exclude []string `json:"exclude,omitempty"`
}

// judgedFolds is the number of cross-validation folds.
const judgedFolds = 5

// judgedKinds are the kinds of query the set holds, each at least
// minPerKind times.
var judgedKinds = []string{"mood", "genre", "instrument", "voice", "tempo", "setting", "function", "negation", "multi"}

// foldOf is the fold of a query id: FNV-1a 32 of the id, modulo the folds.
// It is fixed by the id alone, so folds were settled before any ranking ran.
func foldOf(id string) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % judgedFolds)
}

func loadJudged(t testing.TB) []judgedQuery {
	t.Helper()
	var qs []judgedQuery
	readLines(t, filepath.Join("testdata", "judged-queries.jsonl"), func(line string) {
		var q judgedQuery
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			t.Fatalf("judged-queries.jsonl: %v in %s", err, line)
		}
		qs = append(qs, q)
	})
	return qs
}

// judgeJudged applies the judging rule to one caption: 0 if an exclude
// pattern matches outside a negation; else 2 when every group matches, 1
// when all groups but one match (a query of two or more groups), else 0. A
// group matches when one of its patterns does; a pattern starting with "!"
// matches only where the caption negates it ("there are no vocals").
func judgeJudged(q judgedQuery, caption string) int {
	toks := embedding.Words(caption)
	for _, p := range q.Exclude {
		if plain, _ := matchPattern(toks, p); plain {
			return 0
		}
	}
	n := 0
	for _, g := range q.Groups {
		if slices.ContainsFunc(g, func(p string) bool {
			if neg, ok := strings.CutPrefix(p, "!"); ok {
				_, negated := matchPattern(toks, neg)
				return negated
			}
			plain, _ := matchPattern(toks, p)
			return plain
		}) {
			n++
		}
	}
	switch {
	case n == len(q.Groups):
		return 2
	case len(q.Groups) >= 2 && n == len(q.Groups)-1:
		return 1
	}
	return 0
}

// judgedQrels judges every track for every judged query.
func judgedQrels(qs []judgedQuery, docs []Document) map[string]map[string]int {
	out := make(map[string]map[string]int, len(qs))
	for _, q := range qs {
		out[q.ID] = map[string]int{}
		for _, d := range docs {
			if r := judgeJudged(q, d.Interpretation); r > 0 {
				out[q.ID][d.ID] = r
			}
		}
	}
	return out
}

func TestJudgedJudgingRule(t *testing.T) {
	noVocals := judgedQuery{Groups: [][]string{{"instrumental", "!vocal*"}}, Exclude: []string{"vocal*", "sing*"}}
	pianoNoVocals := judgedQuery{Groups: [][]string{{"piano*"}}, Exclude: []string{"vocal*", "sing*"}}
	three := judgedQuery{Groups: [][]string{{"slow*"}, {"sad"}, {"piano*"}}}
	tests := []struct {
		name    string
		q       judgedQuery
		caption string
		want    int
	}{
		{"instrumental", noVocals, "An instrumental piece.", 2},
		{"absence stated", noVocals, "A guitar plays. There are no vocals.", 2},
		{"vocals present", noVocals, "An instrumental intro, then male vocals.", 0},
		{"absence and presence", noVocals, "No vocals at first; later a man is singing.", 0},
		{"neither", noVocals, "A guitar plays.", 0},
		{"piano, no voice said", pianoNoVocals, "A piano melody.", 2},
		{"piano with singing", pianoNoVocals, "A piano melody and a woman singing.", 0},
		{"piano, no vocals said", pianoNoVocals, "A piano melody without vocals.", 2},
		{"three of three", three, "A slow, sad piano ballad.", 2},
		{"two of three", three, "A slow piano ballad.", 1},
		{"one of three", three, "A piano ballad.", 0},
		{"negated group", three, "A slow piano ballad, not sad.", 1},
	}
	for _, tt := range tests {
		if got := judgeJudged(tt.q, tt.caption); got != tt.want {
			t.Errorf("%s: judge(%q) = %d, want %d", tt.name, tt.caption, got, tt.want)
		}
	}
}

// TestJudgedSet checks the judged set's shape: at least 60 queries, every
// kind at least 8 times, ids unique, each query's fold the hash of its id,
// and every query with enough relevant tracks to fill a top 10 and few
// enough to mean something.
func TestJudgedSet(t *testing.T) {
	const minPerKind = 8
	qs := loadJudged(t)
	if len(qs) < 60 {
		t.Errorf("%d judged queries, want ≥ 60", len(qs))
	}
	kinds := map[string]int{}
	ids := map[string]bool{}
	folds := make([]int, judgedFolds)
	for _, q := range qs {
		kinds[q.Kind]++
		if ids[q.ID] {
			t.Errorf("%s: duplicate id", q.ID)
		}
		ids[q.ID] = true
		if q.Fold != foldOf(q.ID) {
			t.Errorf("%s: fold %d, want %d (FNV-1a of the id mod %d)", q.ID, q.Fold, foldOf(q.ID), judgedFolds)
		}
		folds[foldOf(q.ID)]++
		if len(q.Groups) == 0 || slices.ContainsFunc(q.Groups, func(g []string) bool { return len(g) == 0 }) {
			t.Errorf("%s: an empty group", q.ID)
		}
	}
	for _, k := range judgedKinds {
		if kinds[k] < minPerKind {
			t.Errorf("kind %s: %d queries, want ≥ %d", k, kinds[k], minPerKind)
		}
	}
	if len(kinds) != len(judgedKinds) {
		t.Errorf("kinds %v, want only %v", kinds, judgedKinds)
	}
	t.Logf("%d queries; per fold %v; per kind %v", len(qs), folds, kinds)

	ds := loadMusicCaps(t)
	qrels := judgedQrels(qs, ds.docs)
	var b strings.Builder
	for _, q := range qs {
		n2 := 0
		for _, r := range qrels[q.ID] {
			if r == 2 {
				n2++
			}
		}
		fmt.Fprintf(&b, "\n  %-14s fold %d %-46q relevant %4d, of which 2: %4d", q.ID, q.Fold, q.Text, len(qrels[q.ID]), n2)
		if n2 < 10 || len(qrels[q.ID]) > len(ds.docs)/2 {
			t.Errorf("%s: %d relevant, %d of relevance 2; want ≥ 10 of relevance 2 and at most half the tracks", q.ID, len(qrels[q.ID]), n2)
		}
	}
	t.Log(b.String())
}
