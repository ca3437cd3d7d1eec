package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

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

// DefaultSearchTimeout bounds one SearchConversations unless
// [DB.SetSearchTimeout] sets another bound. Short prefix words match most
// messages: "a b c d e f 1 2" took 1.8 s over 100k messages on PostgreSQL.
const DefaultSearchTimeout = 5 * time.Second

// SetSearchTimeout bounds each later SearchConversations by d (d <= 0
// restores DefaultSearchTimeout).
func (db *DB) SetSearchTimeout(d time.Duration) { db.searchTimeout.Store(int64(d)) }

func (db *DB) searchLimit() time.Duration {
	if d := time.Duration(db.searchTimeout.Load()); d > 0 {
		return d
	}
	return DefaultSearchTimeout
}

// SearchConversations lists the conversations whose title or message text
// holds every word of query as the start of a word: "hotel" finds "hotels",
// "run" finds "running" but "runs" does not (no stemming, on either engine).
// Matching folds case. Message text is the content's "text" blocks, cut at
// 65536 characters a message; tool calls and tool results are not searched.
//
// Each result's Snippet is a piece of its first message that matched,
// around the first word that did.
//
// Results come the most recently updated first, as ListConversations lists
// them, not by relevance: the engines rank differently (bm25, ts_rank), and a
// chat list reads by time. Total counts every match, for paging.
//
// It is bounded in time (DefaultSearchTimeout, SetSearchTimeout): a search
// cut off is a [*store.TimeoutError]. On PostgreSQL the server enforces it,
// as the statement_timeout of a read-only transaction, so that it holds even
// when the client's cancel request is lost; on SQLite, in process, a
// context deadline interrupts the query.
func (db *DB) SearchConversations(ctx context.Context, query string, opt store.ListOptions) (store.ConversationPage, error) {
	terms, err := searchTerms(query)
	if err != nil {
		return store.ConversationPage{}, err
	}
	match := db.matchQuery(terms)
	limit := db.searchLimit()
	var page store.ConversationPage
	timedOut := false
	if db.d.name == store.EnginePostgres {
		page, err = db.searchPostgres(ctx, match, terms, opt, limit)
		var pe *pgconn.PgError
		timedOut = errors.As(err, &pe) && pe.Code == pgQueryCanceled && ctx.Err() == nil
	} else {
		sctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		page, err = db.search(sctx, db.r, match, terms, opt)
		timedOut = err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded)
	}
	if timedOut {
		return store.ConversationPage{}, &store.TimeoutError{Op: "search conversations", Limit: limit, Err: err}
	}
	if err != nil {
		return store.ConversationPage{}, fmt.Errorf("store: search conversations: %w", err)
	}
	return page, nil
}

// pgQueryCanceled is PostgreSQL's SQLSTATE for a statement canceled, by
// statement_timeout or by a cancel request (a canceled context).
const pgQueryCanceled = "57014"

// searchPostgres searches in a read-only transaction whose statements run
// under statement_timeout limit.
func (db *DB) searchPostgres(ctx context.Context, match string, terms []string, opt store.ListOptions, limit time.Duration) (store.ConversationPage, error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.ConversationPage{}, err
	}
	defer tx.Rollback() // read-only: nothing to commit
	// set_config(…, true) is SET LOCAL: the setting ends with the
	// transaction, so the pooled connection goes back without it. A bound
	// under 1 ms would round to 0, which turns the timeout off.
	ms := strconv.FormatInt(max(limit.Milliseconds(), 1), 10)
	if _, err := tx.ExecContext(ctx, `SELECT set_config('statement_timeout', $1, true)`, ms); err != nil {
		return store.ConversationPage{}, err
	}
	return db.search(ctx, tx, match, terms, opt)
}

// searchQuerier is what a search runs on: the reader pool or a transaction.
type searchQuerier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// search counts the conversations matching match and reads opt's page, each
// with its snippet around the first of terms.
func (db *DB) search(ctx context.Context, q searchQuerier, match string, terms []string, opt store.ListOptions) (store.ConversationPage, error) {
	hits := searchHits[db.d.name]
	limit, offset := opt.Bounds()
	page := store.ConversationPage{Conversations: []store.Conversation{}}
	if err := q.QueryRowContext(ctx, `WITH hits AS (`+hits+`)
        SELECT count(*) FROM conversations AS c WHERE c.id IN (SELECT id FROM hits)`, match).Scan(&page.Total); err != nil {
		return store.ConversationPage{}, err
	}
	rows, err := q.QueryContext(ctx, `WITH hits AS (`+hits+`)
        SELECT c.id, c.title, c.created_at, c.updated_at FROM conversations AS c
        WHERE c.id IN (SELECT id FROM hits)
        ORDER BY c.updated_at DESC, c.id DESC LIMIT $2 OFFSET $3`, match, limit, offset)
	if err != nil {
		return store.ConversationPage{}, err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return store.ConversationPage{}, err
		}
		page.Conversations = append(page.Conversations, c)
	}
	if err := rows.Err(); err != nil {
		return store.ConversationPage{}, err
	}
	rows.Close() // the snippets' query may need the same connection (a transaction's)
	if err := db.snippets(ctx, q, match, terms, page.Conversations); err != nil {
		// Snippets are a convenience: when their query fails or the
		// search's bound runs out on it, the page goes without them
		// rather than not at all.
		for i := range page.Conversations {
			page.Conversations[i].Snippet = ""
		}
	}
	return page, nil
}
