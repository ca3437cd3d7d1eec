package sqlstore

import (
	"context"

	"github.com/toolport/toolport/internal/store"
)

// Fenced returns the store's writes made under fence f: each takes effect
// only while turn f.TurnID runs under f.Generation, checked in the write's
// own transaction, and otherwise returns a [*store.FencedError]. A zero
// Fence guards nothing. The turn-log writes are guarded only for turn
// f.TurnID itself.
func (db *DB) Fenced(f store.Fence) store.TurnWrites { return fenced{db: db, f: f} }

// fenced is [DB.Fenced]'s writer: the fence is a field of the writer, so a
// write is fenced exactly when it is made through one.
type fenced struct {
	db *DB
	f  store.Fence
}

func (w fenced) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	return w.db.appendMessage(ctx, &w.f, m)
}

func (w fenced) UpdateMessage(ctx context.Context, m store.Message) error {
	return w.db.updateMessage(ctx, &w.f, m)
}

func (w fenced) UpdateTitle(ctx context.Context, id, title string) error {
	return w.db.updateTitle(ctx, &w.f, id, title)
}

func (w fenced) ReplaceTitle(ctx context.Context, id, from, to string) (bool, error) {
	return w.db.replaceTitle(ctx, &w.f, id, from, to)
}

func (w fenced) TruncateConversation(ctx context.Context, convID, fromID string) (int, error) {
	return w.db.truncateConversation(ctx, &w.f, convID, fromID)
}

func (w fenced) AppendTurnEvents(ctx context.Context, turnID string, events []store.TurnEvent) error {
	return w.db.appendTurnEvents(ctx, &w.f, turnID, events)
}

func (w fenced) EndTurn(ctx context.Context, id, owner string, state store.TurnState) (bool, error) {
	return w.db.endTurn(ctx, &w.f, id, owner, state)
}
