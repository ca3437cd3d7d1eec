package index

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/toolport/toolport/internal/embedding"
)

// Reading is what an index can read of a query: the words in a script
// the index does not cover.
type Reading struct {
	// Unread are the query's words in a script other than Latin that
	// neither the embedder's vocabulary nor the lexical index holds, in
	// query order, each once.
	Unread []string
	// Script names the script of the first unread word ("Hebrew").
	Script string
	// Nothing is true when no word of the query was read.
	Nothing bool
}

// Note is a sentence for the caller about what was not read, or "" when
// everything was.
func (r Reading) Note() string {
	if len(r.Unread) == 0 {
		return ""
	}
	words := strings.Join(r.Unread[:min(len(r.Unread), maxUnreadShown)], ", ")
	if len(r.Unread) > maxUnreadShown {
		words += ", …"
	}
	const fix = "Search in English, or configure a multilingual embeddings endpoint (TOOLPORT_EMBEDDINGS_URL)."
	if r.Nothing {
		return fmt.Sprintf("The index reads English text and could not read this query (%s script: %s), so no tracks are returned. %s", r.Script, words, fix)
	}
	return fmt.Sprintf("The index reads English text; the words in %s script (%s) were not read, so the results match only the rest of the query. %s", r.Script, words, fix)
}

// maxUnreadShown bounds the unread words a note lists.
const maxUnreadShown = 5

// ReadQuery reports which of query's words an index over emb cannot read.
// Only an embedder with its own vocabulary ([embedding.WordVectorSource],
// the offline English word vectors) is judged: a model-server embedder
// reads whatever its model was trained on, multilingual ones included, so
// nothing is reported for it. known, when not nil, reports whether the
// lexical index holds a term. Only words in a script other than Latin count:
// an unknown English word (a misspelling, a name) is not a language the index
// lacks.
func ReadQuery(emb embedding.Embedder, known func(term string) bool, query string) Reading {
	src, ok := emb.(embedding.WordVectorSource)
	if !ok {
		return Reading{}
	}
	query = ClipQuery(query)
	var r Reading
	read := 0
	for _, w := range embedding.Words(query) {
		script := foreignScript(w)
		if script == "" || src.WordVector(w) != nil || (known != nil && known(Stem(w))) {
			if !isStopword(w) {
				read++
			}
			continue
		}
		if slices.Contains(r.Unread, w) {
			continue
		}
		if r.Script == "" {
			r.Script = script
		}
		r.Unread = append(r.Unread, w)
	}
	r.Nothing = len(r.Unread) > 0 && read == 0
	return r
}

// ReadQuery is [ReadQuery] over the engine's embedder and lexical index.
func (e *Engine) ReadQuery(query string) Reading {
	return ReadQuery(e.emb, e.lex.has, query)
}

// foreignScript names the script of w's first letter that is not Latin, or
// "" when every letter is Latin (digits and marks are no script of their own).
func foreignScript(w string) string {
	for _, c := range w {
		if !unicode.IsLetter(c) || unicode.Is(unicode.Latin, c) {
			continue
		}
		for _, name := range scriptNames {
			if unicode.Is(unicode.Scripts[name], c) {
				return name
			}
		}
		return "non-Latin"
	}
	return ""
}

// scriptNames are the scripts a note names, in a fixed order; a letter of
// another script is "non-Latin".
var scriptNames = []string{"Hebrew", "Arabic", "Cyrillic", "Greek", "Han", "Hiragana", "Katakana", "Hangul",
	"Devanagari", "Bengali", "Tamil", "Telugu", "Thai", "Armenian", "Georgian", "Ethiopic", "Gujarati",
	"Gurmukhi", "Kannada", "Malayalam", "Sinhala", "Khmer", "Lao", "Myanmar", "Tibetan", "Syriac", "Thaana"}
