package index

import (
	"strings"
	"unicode"

	"github.com/toolport/toolport/internal/textclip"
)

// QueryTerms returns the weighted lexical terms the engine searches for a
// query: its own terms and, with the engine's parameters, the expansion
// terms. [Explain] uses them to show why a document matched.
func (e *Engine) QueryTerms(query string) map[string]float64 {
	query = ClipQuery(query)
	p := e.RankParams()
	if p.Negation.Drop {
		// A negated word is not why a track matched.
		query, _ = DropNegation(query)
	}
	return e.searchTerms(query, p)
}

// PlainQueryTerms are the terms a query searches for without expansion
// (its negated words left out, [DropNegation]), for callers with no engine
// (the Weaviate backend).
func PlainQueryTerms(query string) map[string]float64 {
	query = ClipQuery(query)
	query, _ = DropNegation(query)
	return queryTerms(query)
}

// maxExplainBytes bounds the text Explain reads.
const maxExplainBytes = 16 << 10

// Explain returns the sentence (or line) of text whose terms weigh most in
// terms, clipped to maxRunes: the part of a caption or lyrics that says why
// the document matched. It returns "" when no sentence holds any term.
func Explain(terms map[string]float64, text string, maxRunes int) string {
	text = textclip.Prefix(text, maxExplainBytes)
	best, bestScore := "", 0.0
	phrases := false
	for t := range terms {
		if strings.Contains(t, " ") {
			phrases = true
			break
		}
	}
	var buf []byte
	for _, s := range sentences(text) {
		var score float64
		seen := map[string]bool{}
		ts := Terms(s)
		for i, t := range ts {
			if !seen[t] {
				seen[t] = true
				score += terms[t]
			}
			// The query's phrases (see RankParams.Phrase) count where
			// the sentence has them; the look-up by bytes allocates
			// nothing (bigram would, per pair of every sentence).
			if phrases && i > 0 {
				buf = append(append(append(buf[:0], ts[i-1]...), ' '), t...)
				if w, ok := terms[string(buf)]; ok && !seen[string(buf)] {
					seen[string(buf)] = true
					score += w
				}
			}
		}
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	return clipRunes(best, maxRunes)
}

// FirstSentence is text's first sentence (or line), clipped to maxRunes.
func FirstSentence(text string, maxRunes int) string {
	text = textclip.Prefix(text, maxExplainBytes)
	if ss := sentences(text); len(ss) > 0 {
		return clipRunes(ss[0], maxRunes)
	}
	return ""
}

// sentences splits text at line breaks and at '.', '!' or '?' followed by
// a space.
func sentences(text string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			emit(i)
		case (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' '):
			emit(i + 1)
		}
	}
	emit(len(text))
	return out
}

func clipRunes(s string, n int) string {
	if n <= 0 {
		return s
	}
	if len(textclip.PrefixRunes(s, n)) == len(s) {
		return s
	}
	// n characters in all, the ellipsis included, with no space before it.
	return strings.TrimRightFunc(textclip.PrefixRunes(s, n-1), unicode.IsSpace) + textclip.Ellipsis
}
