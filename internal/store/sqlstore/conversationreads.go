package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/toolport/toolport/internal/store"
)

// Bounds of one shared conversation read (PostgreSQL).
const (
	maxReadGroup     = 32
	readGroupWorkers = 4
)

// conversationReads reads the conversations that concurrent GetConversation
// calls ask for in one statement on PostgreSQL (qGetConversations). Every
// chat turn starts by reading its conversation, so a burst of messages was
// a burst of one-conversation queries, each a round trip; the reads that
// arrive while a statement runs now share the next. Each is still one
// statement's consistent view, taken after the call was made.
type conversationReads struct {
	db *DB
	b  *batcher[*readReq]
}

// readReq is one GetConversation call waiting in a conversationReads.
type readReq struct {
	ctx  context.Context
	id   string
	conv store.Conversation
	err  error
	done chan struct{}
}

func newConversationReads(db *DB) *conversationReads {
	g := &conversationReads{db: db}
	g.b = newBatcher(readGroupWorkers, readFits, g.read)
	return g
}

// readFits bounds how many calls share a statement (calls for one
// conversation count once each: they share its rows but not their copies).
func readFits(batch []*readReq, _ *readReq) bool { return len(batch) < maxReadGroup }

// get returns conversation id as GetConversation does.
func (g *conversationReads) get(ctx context.Context, id string) (store.Conversation, error) {
	r := &readReq{ctx: ctx, id: id, done: make(chan struct{})}
	if err := g.b.send(ctx, r); err != nil {
		return store.Conversation{}, fmt.Errorf("store: get conversation: %w", err)
	}
	<-r.done // the batcher answers every request it took
	return r.conv, r.err
}

func (g *conversationReads) close() { g.b.close() }

// qGetConversations reads the conversations of $1.
const qGetConversations = conversationColumns + conversationJoin +
	` WHERE c.id = ANY($1::text[]) ORDER BY c.id, m.seq`

// read answers a batch from one statement, not bound to any caller's
// context: one caller going away must not fail the others.
func (g *conversationReads) read(batch []*readReq) {
	defer func() {
		for _, r := range batch {
			close(r.done)
		}
	}()
	var ids []string
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("store: get conversation: %w", err)
			continue
		}
		ids = append(ids, r.id)
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var convs map[string]*store.Conversation
	rows, err := g.db.r.QueryContext(context.Background(), qGetConversations, ids)
	if err == nil {
		convs, err = scanConversations(rows)
	} else {
		err = fmt.Errorf("store: get conversation: %w", err)
	}
	shared := map[string]bool{}
	for _, r := range batch {
		switch {
		case r.err != nil:
		case err != nil:
			r.err = err
		case convs[r.id] == nil:
			r.err = fmt.Errorf("store: conversation %q: %w", r.id, store.ErrNotFound)
		default:
			// Each caller gets its own messages to change.
			c := *convs[r.id]
			if shared[r.id] {
				c.Messages = slices.Clone(c.Messages)
			}
			shared[r.id] = true
			r.conv = c
		}
	}
}
