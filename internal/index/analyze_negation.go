package index

import (
	"strings"

	"github.com/toolport/toolport/internal/embedding"
)

// negationMark prefixes a term its text negates: "there are no voices"
// indexes "not:voice", not "voice", so that a search for voices does not
// find the captions that say there are none. Whitespace keeps it one token
// wherever terms are joined (the Weaviate backend's term fields).
const negationMark = "not:"

// negationScope is how many words after a negator it reaches, within its
// clause ("no other instruments", "no voices in this song").
const negationScope = 3

// termNegators start a negation.
var termNegators = map[string]bool{"no": true, "not": true, "without": true, "nor": true, "neither": true, "never": true}

// negationTerms is [Terms] with the terms of words a negator reaches (up to
// negationScope words after "no", "not", "without" … in the same clause)
// marked with negationMark.
func negationTerms(text string) []string {
	var out []string
	for clause := range strings.FieldsFuncSeq(text, isClauseBreak) {
		reach := 0
		for _, w := range embedding.Words(clause) {
			if termNegators[w] {
				reach = negationScope
				continue
			}
			mark := ""
			if reach > 0 {
				mark = negationMark
				reach--
			}
			for _, t := range Terms(w) {
				out = append(out, mark+t)
			}
		}
	}
	return out
}

// SplitNegation separates the words a query negates from the rest: "piano
// without vocals" is kept "piano", negated "vocals"; "a happy song, not sad"
// is kept "a happy song", negated "sad". A negator ("no", "not", "without" …)
// reaches negationScope words after it within its clause, as in
// negationTerms; the negators themselves are dropped. Clauses stay apart
// (joined by ", ") so that phrases do not form across them.
func SplitNegation(text string) (kept, negated string) {
	var k, n []string
	for clause := range strings.FieldsFuncSeq(text, isClauseBreak) {
		var kw []string
		reach := 0
		for _, w := range embedding.Words(clause) {
			switch {
			case termNegators[w]:
				reach = negationScope
			case w == "but": // "no drums but a bass": the bass is wanted
				reach = 0
			case reach > 0:
				n = append(n, w)
				reach--
			default:
				kw = append(kw, w)
			}
		}
		if len(kw) > 0 {
			k = append(k, strings.Join(kw, " "))
		}
	}
	if len(n) == 0 {
		return text, ""
	}
	return strings.Join(k, ", "), strings.Join(n, " ")
}

// DropNegation is [SplitNegation] as a ranking that drops negated words
// ([NegationParams].Drop) applies it: the words to search for and those
// to demote. A query that negates nothing, or only negates ("no vocals"),
// keeps its words and negates none: there is nothing else to search for.
func DropNegation(query string) (search, negated string) {
	if kept, neg := SplitNegation(query); neg != "" && len(Terms(kept)) > 0 {
		return kept, neg
	}
	return query, ""
}

// OnlyNegation reports whether query says only what to leave out ("no
// vocals", "without drums"): it has negated words and nothing else to search
// for. It returns the negated words.
func OnlyNegation(query string) (negated string, only bool) {
	query = ClipQuery(query)
	kept, negated := SplitNegation(query)
	return negated, negated != "" && len(Terms(kept)) == 0
}
