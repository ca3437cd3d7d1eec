package index

import "testing"

// What the tests of package index_test need of this package's test code:
// they may import packages that import index (the Weaviate backend).

// JudgedSet is the judged queries (testdata/judged-queries.jsonl) with each
// one's relevant MusicCaps tracks.
type JudgedSet struct {
	Docs    []Document
	Queries []JudgedQuery
	Qrels   map[string]map[string]int // query id → track id → relevance
}

// JudgedQuery is one judged query.
type JudgedQuery struct{ ID, Kind, Text string }

// LoadJudgedSet reads the judged queries and judges every MusicCaps track.
func LoadJudgedSet(t testing.TB) JudgedSet {
	t.Helper()
	ds := loadMusicCaps(t)
	qs := loadJudged(t)
	out := JudgedSet{Docs: ds.docs, Qrels: judgedQrels(qs, ds.docs)}
	for _, q := range qs {
		out.Queries = append(out.Queries, JudgedQuery{q.ID, q.Kind, q.Text})
	}
	return out
}

// NDCGAt10 is the measure of every quality test here.
func NDCGAt10(hits []Hit, rel map[string]int) float64 { return ndcgAt10(hits, rel) }
