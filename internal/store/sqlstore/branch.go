package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/toolport/toolport/internal/store"
)

// SetConversationModel sets the model a conversation answers with ("" for
// the server's default), or returns [store.ErrNotFound]. Like UpdateTitle it
// does not move the conversation up the list. The store checks only the
// name's size and text; which names exist is the server's business.
func (db *DB) SetConversationModel(ctx context.Context, id, model string) error {
	if len(model) > store.MaxModelBytes {
		return fmt.Errorf("%w: model name longer than %d bytes", store.ErrInvalid, store.MaxModelBytes)
	}
	if err := validText("model", model); err != nil {
		return err
	}
	res, err := db.w.ExecContext(ctx, `UPDATE conversations SET model = $2 WHERE id = $1`, id, model)
	return affectedOne(res, err, "set conversation model", id)
}

// TruncateConversation deletes message fromID of conversation convID and
// every message after it, in one transaction, and returns how many went.
// This is how a regenerated or edited turn replaces the branch it starts
// from: the old messages are not kept. A conversation or message that does
// not exist (or a message of another conversation) is [store.ErrNotFound].
// Under a fence (see [DB.Fenced]) it deletes only while the fence
// holds, or returns a [store.FencedError].
func (db *DB) TruncateConversation(ctx context.Context, convID, fromID string) (int, error) {
	return db.truncateConversation(ctx, nil, convID, fromID)
}

// truncateConversation is TruncateConversation under fence, when not nil.
func (db *DB) truncateConversation(ctx context.Context, fence *store.Fence, convID, fromID string) (int, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: truncate conversation: %w", err)
	}
	defer rollback(tx)
	// Under a turn's fence (an edit or a regeneration deleting what it
	// replaces), a replica that stalled past its lease must not delete
	// what the conversation holds since.
	if f, ok := fenceOf(fence, ""); ok {
		if err := db.checkFence(ctx, tx, f); err != nil {
			return 0, err
		}
	}
	// Touching the conversation first locks its row on PostgreSQL, so that
	// an append cannot slip in between the lookup and the delete.
	res, err := tx.ExecContext(ctx, `UPDATE conversations SET updated_at = $2 WHERE id = $1`, convID, db.d.time(now()))
	if err := affectedOne(res, err, "truncate conversation", convID); err != nil {
		return 0, err
	}
	var seq int64
	err = tx.QueryRowContext(ctx, `SELECT seq FROM messages WHERE id = $1 AND conversation_id = $2`, fromID, convID).Scan(&seq)
	if err == sql.ErrNoRows {
		return 0, fmt.Errorf("store: message %q of conversation %q: %w", fromID, convID, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("store: truncate conversation: %w", err)
	}
	res, err = tx.ExecContext(ctx, `DELETE FROM messages WHERE conversation_id = $1 AND seq >= $2`, convID, seq)
	if err != nil {
		return 0, fmt.Errorf("store: truncate conversation: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: truncate conversation: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: truncate conversation: %w", err)
	}
	return int(n), nil
}
