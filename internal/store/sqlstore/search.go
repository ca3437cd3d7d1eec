package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/store"
)

// searchTerms splits a search query into words: runs of letters, digits and
// combining marks, as both engines' tokenizers split text (unicode61 on
// SQLite, the default parser on PostgreSQL). A run must hold a letter or a
// digit; punctuation and operators are separators, so no query syntax of
// either engine reaches it.
func searchTerms(query string) ([]string, error) {
	if len(query) > store.MaxSearchQueryBytes {
		return nil, fmt.Errorf("%w: search query longer than %d bytes", store.ErrInvalid, store.MaxSearchQueryBytes)
	}
	if !utf8.ValidString(query) {
		return nil, fmt.Errorf("%w: search query: invalid UTF-8", store.ErrInvalid)
	}
	words := strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	terms := words[:0]
	for _, w := range words {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			terms = append(terms, w)
		}
	}
	switch {
	case len(terms) == 0:
		return nil, fmt.Errorf("%w: search query has no word to look for", store.ErrInvalid)
	case len(terms) > store.MaxSearchTerms:
		return nil, fmt.Errorf("%w: search query has more than %d words", store.ErrInvalid, store.MaxSearchTerms)
	}
	return terms, nil
}

// matchQuery builds the engine's full-text query: every term as a prefix,
// all of them required. Terms hold only letters, digits and marks, so the
// quoting cannot be broken out of.
func (db *DB) matchQuery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		if db.d.name == store.EnginePostgres {
			parts[i] = "'" + t + "':*"
		} else {
			parts[i] = `"` + t + `"*`
		}
	}
	if db.d.name == store.EnginePostgres {
		return strings.Join(parts, " & ")
	}
	return strings.Join(parts, " ")
}

// searchHits is, per engine, a query naming the ids of the conversations
// that match $1 in their title or in a message's text. Both use the indexes
// of migration 0004: the expressions must stay as they are there.
var searchHits = map[string]string{
	store.EngineSQLite: `SELECT m.conversation_id AS id FROM message_fts
            JOIN messages AS m ON m.seq = message_fts.rowid WHERE message_fts MATCH $1
        UNION
        SELECT conversation_id FROM conversation_title_fts WHERE conversation_title_fts MATCH $1`,
	store.EnginePostgres: `SELECT conversation_id AS id FROM messages
            WHERE to_tsvector('simple', toolport_message_text(content)) @@ to_tsquery('simple', $1)
        UNION
        SELECT id FROM conversations WHERE to_tsvector('simple', title) @@ to_tsquery('simple', $1)`,
}

// SearchConversations lists the conversations whose title or message text
// holds every word of query as the start of a word: "hotel" finds "hotels",
// "run" finds "running" but "runs" does not (no stemming, on either engine).
// Matching folds case. Message text is the content's "text" blocks, cut at
// 65536 characters a message; tool calls and tool results are not searched.
//
// Results come the most recently updated first, as ListConversations lists
// them, not by relevance: the engines rank differently (bm25, ts_rank), and a
// chat list reads by time. Total counts every match, for paging.
func (db *DB) SearchConversations(ctx context.Context, query string, opt store.ListOptions) (store.ConversationPage, error) {
	terms, err := searchTerms(query)
	if err != nil {
		return store.ConversationPage{}, err
	}
	match := db.matchQuery(terms)
	hits := searchHits[db.d.name]
	limit, offset := opt.Bounds()
	page := store.ConversationPage{Conversations: []store.Conversation{}}
	if err := db.r.QueryRowContext(ctx, `WITH hits AS (`+hits+`)
        SELECT count(*) FROM conversations AS c WHERE c.id IN (SELECT id FROM hits)`, match).Scan(&page.Total); err != nil {
		return store.ConversationPage{}, fmt.Errorf("store: search conversations: %w", err)
	}
	rows, err := db.r.QueryContext(ctx, `WITH hits AS (`+hits+`)
        SELECT c.id, c.title, c.created_at, c.updated_at FROM conversations AS c
        WHERE c.id IN (SELECT id FROM hits)
        ORDER BY c.updated_at DESC, c.id DESC LIMIT $2 OFFSET $3`, match, limit, offset)
	if err != nil {
		return store.ConversationPage{}, fmt.Errorf("store: search conversations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return store.ConversationPage{}, fmt.Errorf("store: search conversations: %w", err)
		}
		page.Conversations = append(page.Conversations, c)
	}
	if err := rows.Err(); err != nil {
		return store.ConversationPage{}, fmt.Errorf("store: search conversations: %w", err)
	}
	return page, nil
}
