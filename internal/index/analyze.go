package index

import (
	"strings"

	"github.com/toolport/toolport/internal/embedding"
)

// Terms is the lexical analyzer: the words of [embedding.Words] without
// English stopwords, each reduced by [Stem]. Hyphenated compounds also yield
// their parts, so "lo-fi" matches "lo fi" and "hip-hop" matches "hip hop".
func Terms(text string) []string {
	words := embedding.Words(text)
	out := make([]string, 0, len(words))
	for _, w := range words {
		if strings.Contains(w, "-") {
			for part := range strings.SplitSeq(w, "-") {
				if !isStopword(part) {
					out = append(out, Stem(part))
				}
			}
		}
		if !isStopword(w) {
			out = append(out, Stem(w))
		}
	}
	return out
}

// Stem is a light English suffix stripper: plurals, -ing, -ed, -ly, -ness.
// It conflates the common inflections ("guitars", "strumming", "played") and
// leaves short words and unknown shapes alone; it is deliberately weaker than
// Porter's stemmer, which merges too much ("university", "universe").
func Stem(w string) string {
	if len(w) <= 3 || !isASCIILower(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ness") && len(w) > 6:
		return Stem(w[:len(w)-4])
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		return undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4 && !strings.HasSuffix(w, "eed"):
		return undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ly") && len(w) > 5:
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// undouble turns "strumm" into "strum" (from "strumming"), keeping "ll", "ss"
// and "zz", which English doubles in the stem itself ("thrill", "jazz").
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return true
}

// isStopword reports whether w is an English function word, which carries no
// topic. Words such as "song", "music" and "sound" are not stopwords: they
// are frequent in a music index, and BM25's IDF already gives them little
// weight.
func isStopword(w string) bool {
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
		"are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
		"by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from",
		"further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him",
		"himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me",
		"more", "most", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or",
		"other", "our", "ours", "ourselves", "out", "over", "own", "s", "same", "she", "should", "so",
		"some", "such", "t", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
		"there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very",
		"was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
		"with", "would", "you", "your", "yours", "yourself", "yourselves":
		return true
	}
	return false
}
