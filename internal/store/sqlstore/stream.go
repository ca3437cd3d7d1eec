package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/toolport/toolport/internal/store"
)

// qStreamHead reads a conversation's row, its last message's seq and its
// messages' summed usage (has counts the messages that have any).
const qStreamHead = `SELECT c.id, c.title, c.created_at, c.updated_at, c.model,
    CAST(coalesce(max(m.seq), 0) AS BIGINT), count(m.input_tokens) + count(m.output_tokens),
    CAST(coalesce(sum(m.input_tokens), 0) AS BIGINT), CAST(coalesce(sum(m.output_tokens), 0) AS BIGINT)
    FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id
    WHERE c.id = $1 GROUP BY c.id, c.title, c.created_at, c.updated_at, c.model`

// qStreamMessages reads a conversation's messages up to a seq, in order.
const qStreamMessages = `SELECT m.id, m.role, m.content, m.incomplete, m.input_tokens, m.output_tokens,
    m.created_at, m.error_code, m.error_message, m.context_tokens
    FROM messages m WHERE m.conversation_id = $1 AND m.seq <= $2 ORDER BY m.seq`

// StreamConversation reads conversation id for an export without holding
// its messages: head gets the conversation (Messages nil) and the sum of
// its messages' input and output tokens (nil when none has usage), then
// each gets every message in order, one row at a time, so that memory is
// bounded by the largest message rather than the conversation (a 320 MB
// conversation took 2-3 GB read whole). An unknown id is [store.ErrNotFound]
// before head is called; an error of head or each ends the read and is
// returned as it is.
//
// Two statements, not a transaction: the messages are those up to the last
// one head saw, so a message appended meanwhile is left out of both, but a
// message updated or truncated between them may not match the usage sum.
// A read transaction would hold a snapshot (or, on an in-memory SQLite
// database, the one connection) for as long as a slow client downloads.
func (db *DB) StreamConversation(ctx context.Context, id string, head func(store.Conversation, *store.Usage) error, each func(store.Message) error) error {
	var c store.Conversation
	var created, updated dbTime
	var last, has, in, out int64
	err := db.r.QueryRowContext(ctx, qStreamHead, id).Scan(&c.ID, &c.Title, &created, &updated, &c.Model, &last, &has, &in, &out)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: conversation %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: stream conversation: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = created.t, updated.t
	var usage *store.Usage
	if has > 0 {
		usage = &store.Usage{InputTokens: int(in), OutputTokens: int(out)}
	}
	if err := head(c, usage); err != nil {
		return err
	}
	if last == 0 {
		return nil
	}
	rows, err := db.r.QueryContext(ctx, qStreamMessages, id, last)
	if err != nil {
		return fmt.Errorf("store: stream conversation: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var msgID string
		var r joinedMessage
		if err := rows.Scan(&msgID, &r.role, &r.content, &r.incomplete, &r.in, &r.out, &r.at, &r.errCode, &r.errMsg, &r.cx); err != nil {
			return fmt.Errorf("store: stream conversation: %w", err)
		}
		if err := each(r.message(msgID, c.ID)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: stream conversation: %w", err)
	}
	return nil
}
