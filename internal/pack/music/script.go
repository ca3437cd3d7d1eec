package music

import (
	"fmt"
	"unicode"
)

// The index is searched as English: its analyzer keeps English words,
// drops English stopwords and strips English suffixes (internal/index), and
// the captions it holds are English. A query written in another script
// shares no word with it and can match little or nothing, which a result of
// 0 tracks alone does not say; semanticSearch's note does.

// scripts are the scripts a query is named by, most common first; a
// letter of none of them (and not Latin) is "a non-Latin script".
var scripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Hebrew", unicode.Hebrew}, {"Arabic", unicode.Arabic}, {"Cyrillic", unicode.Cyrillic},
	{"Greek", unicode.Greek}, {"Han", unicode.Han}, {"Hiragana", unicode.Hiragana},
	{"Katakana", unicode.Katakana}, {"Hangul", unicode.Hangul}, {"Devanagari", unicode.Devanagari},
	{"Thai", unicode.Thai}, {"Armenian", unicode.Armenian}, {"Georgian", unicode.Georgian},
}

// queryScriptNote returns a note for a query whose letters are mostly not
// Latin (the index's script), naming the query's script; "" otherwise.
func queryScriptNote(q string) string {
	latin, other := 0, 0
	counts := make([]int, len(scripts)+1) // the last: a script not listed
	for _, r := range q {
		if !unicode.IsLetter(r) {
			continue
		}
		if unicode.Is(unicode.Latin, r) {
			latin++
			continue
		}
		other++
		i := len(scripts)
		for j, s := range scripts {
			if unicode.Is(s.table, r) {
				i = j
				break
			}
		}
		counts[i]++
	}
	if other == 0 || latin >= other {
		return ""
	}
	best := 0
	for i, n := range counts {
		if n > counts[best] {
			best = i
		}
	}
	name := "a non-Latin script"
	if best < len(scripts) {
		name = scripts[best].name + " script"
	}
	return fmt.Sprintf("The track index is English and is searched as English words; this query is in %s, so it may match few or no tracks. Search again with the query in English.", name)
}
