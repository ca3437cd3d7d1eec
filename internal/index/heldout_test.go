package index

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
)

// heldoutQuery is one of this project's own judged queries
// (testdata/heldout-queries.json; the rule is in testdata/README.md).
type heldoutQuery struct {
	ID     string     `json:"id"`
	Text   string     `json:"text"`
	Groups [][]string `json:"groups"`
}

func loadHeldout(t testing.TB) []heldoutQuery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "heldout-queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []heldoutQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	if len(qs) != 15 {
		t.Fatalf("%d held-out queries, want 15", len(qs))
	}
	return qs
}

// negators void a pattern match among the three tokens before it.
var negators = map[string]bool{"no": true, "not": true, "without": true, "nor": true, "neither": true,
	"lacks": true, "lack": true, "absence": true}

// patternMatches reports whether pattern (words; a final '*' makes the last
// one a prefix) occurs in toks outside a negation.
func patternMatches(toks []string, pattern string) bool {
	plain, _ := matchPattern(toks, pattern)
	return plain
}

// matchPattern reports whether pattern occurs in toks outside a negation
// (plain) and inside one (negated: a negator among the three tokens before).
func matchPattern(toks []string, pattern string) (plain, negated bool) {
	words := strings.Fields(strings.ToLower(pattern))
	if len(words) == 0 {
		return false, false
	}
	prefix := strings.HasSuffix(pattern, "*")
	if prefix {
		words[len(words)-1] = strings.TrimSuffix(words[len(words)-1], "*")
	}
	for i := 0; i+len(words) <= len(toks); i++ {
		ok := true
		for j, w := range words {
			tok := toks[i+j]
			if j == len(words)-1 && prefix {
				ok = strings.HasPrefix(tok, w)
			} else {
				ok = tok == w
			}
			if !ok {
				break
			}
		}
		if !ok {
			continue
		}
		neg := false
		for k := max(0, i-3); k < i; k++ {
			neg = neg || negators[toks[k]]
		}
		if neg {
			negated = true
		} else {
			plain = true
		}
	}
	return plain, negated
}

// judge applies the held-out judging rule to one caption.
func judge(q heldoutQuery, caption string) int {
	toks := embedding.Words(caption)
	n := 0
	for _, g := range q.Groups {
		for _, p := range g {
			if patternMatches(toks, p) {
				n++
				break
			}
		}
	}
	switch {
	case n == len(q.Groups):
		return 2 // a one-group query's match is a full match
	case n > 0:
		return 1
	}
	return 0
}

// heldoutQrels judges every track for every held-out query.
func heldoutQrels(qs []heldoutQuery, docs []Document) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, q := range qs {
		out[q.ID] = map[string]int{}
		for _, d := range docs {
			if r := judge(q, d.Interpretation); r > 0 {
				out[q.ID][d.ID] = r
			}
		}
	}
	return out
}

func TestHeldoutJudgingRule(t *testing.T) {
	twoGroups := heldoutQuery{Groups: [][]string{{"happy", "joy*"}, {"danc*", "hip hop"}}}
	oneGroup := heldoutQuery{Groups: [][]string{{"choir*", "chant*"}}}
	tests := []struct {
		name    string
		q       heldoutQuery
		caption string
		want    int
	}{
		{"both groups", twoGroups, "A joyous tune, good for dancing.", 2},
		{"one group", twoGroups, "A happy song.", 1},
		{"phrase", twoGroups, "Some hip hop.", 1},
		{"phrase split is no match", twoGroups, "hip and hop", 0},
		{"negated", twoGroups, "This is not happy. It is not danceable.", 0},
		{"negation reaches three tokens back", twoGroups, "There is no real joy here", 0},
		{"negation stops after three tokens", twoGroups, "no, it is very happy", 1},
		{"prefix", oneGroup, "choirs", 2},
		{"two patterns of one group", oneGroup, "a choir chanting", 2},
		{"nothing", oneGroup, "a guitar", 0},
	}
	for _, tt := range tests {
		if got := judge(tt.q, tt.caption); got != tt.want {
			t.Errorf("%s: judge(%q) = %d, want %d", tt.name, tt.caption, got, tt.want)
		}
	}
}

// TestHeldoutJudgements checks that every held-out query has a sensible
// number of relevant tracks: enough to fill a top 10, few enough to mean
// something.
func TestHeldoutJudgements(t *testing.T) {
	ds := loadMusicCaps(t)
	qs := loadHeldout(t)
	qrels := heldoutQrels(qs, ds.docs)
	for _, q := range qs {
		n2 := 0
		for _, r := range qrels[q.ID] {
			if r == 2 {
				n2++
			}
		}
		t.Logf("%s %-40q relevant %4d, of which relevance 2: %3d", q.ID, q.Text, len(qrels[q.ID]), n2)
		if n2 < 10 || len(qrels[q.ID]) > len(ds.docs)/2 {
			t.Errorf("%s: %d relevant, %d of relevance 2; want ≥ 10 of relevance 2 and at most half the tracks", q.ID, len(qrels[q.ID]), n2)
		}
	}
}
