package sqlstore

import (
	"context"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/textclip"
)

// Bounds of a search result's snippet, in characters.
const (
	snippetRunes  = 160 // the whole snippet, without the ellipses
	snippetBefore = 50  // kept before the word that matched
)

// firstMatchText is, per engine, a query naming for each of the conversations
// $2… the indexed text of its first message that matches $1 (the text the
// search matched: text blocks, cut at 65536 characters).
var firstMatchText = map[string]string{
	store.EngineSQLite: `SELECT id, body FROM (
            SELECT m.conversation_id AS id, message_fts.body AS body,
                row_number() OVER (PARTITION BY m.conversation_id ORDER BY m.seq) AS n
            FROM message_fts JOIN messages AS m ON m.seq = message_fts.rowid
            WHERE message_fts MATCH $1 AND m.conversation_id IN (%s)) AS f WHERE n = 1`,
	store.EnginePostgres: `SELECT id, body FROM (
            SELECT conversation_id AS id, toolport_message_text(content) AS body,
                row_number() OVER (PARTITION BY conversation_id ORDER BY seq) AS n
            FROM messages
            WHERE to_tsvector('simple', toolport_message_text(content)) @@ to_tsquery('simple', $1)
                AND conversation_id IN (%s)) AS f WHERE n = 1`,
}

// snippets fills the Snippet of each of convs whose messages
// matched: one query for the whole page, under the search's bound.
func (db *DB) snippets(ctx context.Context, q searchQuerier, match string, terms []string, convs []store.Conversation) error {
	if len(convs) == 0 {
		return nil
	}
	args := []any{match}
	marks := make([]string, len(convs))
	for i, c := range convs {
		args = append(args, c.ID)
		marks[i] = "$" + strconv.Itoa(i+2)
	}
	rows, err := q.QueryContext(ctx, strings.Replace(firstMatchText[db.d.name], "%s", strings.Join(marks, ", "), 1), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	byID := make(map[string]string, len(convs))
	for rows.Next() {
		var id string
		var body *string
		if err := rows.Scan(&id, &body); err != nil {
			return err
		}
		if body != nil {
			byID[id] = *body
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range convs {
		if body, ok := byID[convs[i].ID]; ok {
			convs[i].Snippet = Snippet(body, terms)
		}
	}
	return nil
}

// Snippet returns a piece of text on one line, at most snippetRunes
// characters (plus an ellipsis at each end that was cut), around the first
// word that starts with one of terms, folding case as the engines do; the
// start of the text when no word does (an engine matched what this simple
// reading does not, such as a word split otherwise).
func Snippet(text string, terms []string) string {
	text = strings.Join(strings.Fields(strings.ToValidUTF8(text, "")), " ")
	at := firstWordMatch(text, terms)
	start := 0
	if at > 0 {
		// Back up snippetBefore characters, then to the start of a word.
		start = at
		for n := 0; n < snippetBefore && start > 0; n++ {
			_, size := utf8.DecodeLastRuneInString(text[:start])
			start -= size
		}
		if start > 0 {
			if sp := strings.IndexByte(text[start:at], ' '); sp >= 0 {
				start += sp + 1
			}
		}
	}
	out := textclip.Runes(text[start:], snippetRunes)
	if start > 0 {
		out = textclip.Ellipsis + out
	}
	return out
}

// firstWordMatch returns the byte offset of the first word of text that
// starts with one of terms (case folded), or -1.
func firstWordMatch(text string, terms []string) int {
	inWord := false
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if word && !inWord {
			for _, t := range terms {
				if hasFoldPrefix(text[i:], t) {
					return i
				}
			}
		}
		inWord = word
	}
	return -1
}

// hasFoldPrefix reports whether s starts with prefix under Unicode case
// folding, character by character.
func hasFoldPrefix(s, prefix string) bool {
	for _, p := range prefix {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || !equalFoldRune(r, p) {
			return false
		}
		s = s[size:]
	}
	return true
}

func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}
