package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/toolport/toolport/internal/store"
)

// Bounds of one message group commit (PostgreSQL).
const (
	maxMessageGroup     = 64
	messageGroupWorkers = 4
)

// messageGroup commits concurrent AppendMessage calls in one statement on
// PostgreSQL (qGroupMessages), each call's fence checked on its own.
//
// It replaced a transaction per batch that took a savepoint around every
// message so that one failing would not fail the others: BEGIN, the
// fences' lock, then three statements per message and COMMIT, each a round
// trip. Under a burst of chat turns every turn's first event waits for its
// user message, and those round trips were most of PostgreSQL's work. Now
// a batch is one statement and one commit (one WAL flush); a call returns
// only after its statement committed, as before. A statement that fails
// (a message a constraint refuses) is retried one call at a time, so that
// the error is that call's own.
type messageGroup struct {
	db      *DB
	commits atomic.Int64 // statements committed, for tests
	grouped atomic.Int64 // of which carried several appends
	b       *batcher[*messageReq]
}

// messageReq is one AppendMessage call waiting in a messageGroup.
type messageReq struct {
	call
	m     store.Message
	fence *store.Fence
}

func newMessageGroup(db *DB) *messageGroup {
	g := &messageGroup{db: db}
	g.b = newBatcher(messageGroupWorkers, messageFits, g.commit)
	return g
}

// messageFits keeps one message per conversation in a statement, so that
// a conversation's appends are numbered in the order they were made, and
// one per message id, so that each call's answer is its own.
func messageFits(batch []*messageReq, r *messageReq) bool {
	if len(batch) >= maxMessageGroup {
		return false
	}
	for _, q := range batch {
		if q.m.ConversationID == r.m.ConversationID || q.m.ID == r.m.ID {
			return false
		}
	}
	return true
}

// submit queues m (under fence, if not nil) and waits until it is committed
// or has failed.
func (g *messageGroup) submit(ctx context.Context, m store.Message, fence *store.Fence) error {
	return submit(ctx, g.b, "append message", &messageReq{call: newCall(ctx), m: m, fence: fence})
}

func (g *messageGroup) close() { g.b.close() }

// qGroupMessages appends the messages of arrays $1–$11 whose fence
// ($12 turn, $13 generation; NULL for none) holds, each to the end of its
// conversation, touching the conversations it appended to ($14), and
// answers per message: its fence held, its conversation exists, it went in.
//
// Locks are taken in one global order, so that concurrent statements and
// the other turn writes cannot deadlock: the fences' turn rows first, FOR
// SHARE in id order (as renewals and take-overs, see lockTurnsInOrder), then the
// conversations' rows, FOR NO KEY UPDATE in id order, which also queues the
// appends of one conversation so that their seq is their commit order. A
// message whose id is taken is not inserted (ON CONFLICT) and does not
// touch its conversation.
const qGroupMessages = `WITH f AS MATERIALIZED (SELECT id, generation FROM turns
        WHERE id = ANY($12::text[]) AND state = 'running' ORDER BY id FOR SHARE),
    v AS MATERIALIZED (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[],
            $6::bigint[], $7::bigint[], $8::timestamptz[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::bigint[])
        WITH ORDINALITY AS v (id, conversation_id, role, content, incomplete, input_tokens, output_tokens, created_at,
            error_code, error_message, context_tokens, fence_turn, fence_gen, ord)),
    ok AS MATERIALIZED (SELECT * FROM v WHERE v.fence_turn IS NULL
        OR EXISTS (SELECT 1 FROM f WHERE f.id = v.fence_turn AND f.generation = v.fence_gen)),
    c AS MATERIALIZED (SELECT id FROM conversations
        WHERE id IN (SELECT conversation_id FROM ok) ORDER BY id FOR NO KEY UPDATE),
    ins AS (INSERT INTO messages
            (id, conversation_id, role, content, incomplete, input_tokens, output_tokens, created_at, error_code, error_message, context_tokens)
        SELECT ok.id, ok.conversation_id, ok.role, ok.content::jsonb, ok.incomplete, ok.input_tokens, ok.output_tokens,
            ok.created_at, ok.error_code, ok.error_message, ok.context_tokens
        FROM ok JOIN c ON c.id = ok.conversation_id ORDER BY ok.ord
        ON CONFLICT (id) DO NOTHING RETURNING id, conversation_id),
    touch AS (UPDATE conversations SET updated_at = $14 WHERE id IN (SELECT conversation_id FROM ins))
SELECT v.ord, v.id IN (SELECT id FROM ok), v.conversation_id IN (SELECT id FROM c), v.id IN (SELECT id FROM ins)
    FROM v`

// commit writes a batch in one statement (autocommit), not bound to any
// caller's context: one caller going away must not fail the others.
func (g *messageGroup) commit(batch []*messageReq) {
	writeEach(batch, "append message", g.run)
}

// run executes qGroupMessages for batch and returns each call's outcome,
// or the error that failed the statement.
func (g *messageGroup) run(batch []*messageReq) ([]error, error) {
	n := len(batch)
	ids, convs, roles, contents := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	incomplete := make([]bool, n)
	in, out, cx := make([]*int64, n), make([]*int64, n), make([]*int64, n)
	created := make([]time.Time, n)
	codes, msgs, fenceTurns := make([]*string, n), make([]*string, n), make([]*string, n)
	fenceGens := make([]*int64, n)
	for i, r := range batch {
		m := r.m
		ids[i], convs[i], roles[i], contents[i], incomplete[i] = m.ID, m.ConversationID, string(m.Role), string(m.Content), m.Incomplete
		created[i] = m.CreatedAt
		if u := m.Usage; u != nil {
			in[i], out[i] = ptr(int64(u.InputTokens)), ptr(int64(u.OutputTokens))
			if u.ContextTokens > 0 {
				cx[i] = ptr(int64(u.ContextTokens))
			}
		}
		if e := m.Error; e != nil {
			codes[i], msgs[i] = &e.Code, &e.Message
		}
		if f := r.fence; f != nil {
			fenceTurns[i], fenceGens[i] = &f.TurnID, &f.Generation
		}
	}
	ctx := context.Background()
	rows, err := g.db.w.QueryContext(ctx, qGroupMessages, ids, convs, roles, contents, incomplete, in, out, created,
		codes, msgs, cx, fenceTurns, fenceGens, now())
	if err != nil {
		return nil, fmt.Errorf("store: append message: %w", err)
	}
	errs := make([]error, n)
	seen := 0
	for rows.Next() {
		var ord int64
		var held, exists, inserted bool
		if err := rows.Scan(&ord, &held, &exists, &inserted); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: append message: %w", err)
		}
		if ord < 1 || ord > int64(n) {
			rows.Close()
			return nil, fmt.Errorf("store: append message: answer for message %d of %d", ord, n)
		}
		r := batch[ord-1]
		switch {
		case !held:
			errs[ord-1] = &store.FencedError{TurnID: r.fence.TurnID, Generation: r.fence.Generation}
		case !exists:
			errs[ord-1] = fmt.Errorf("store: conversation %q: %w", r.m.ConversationID, store.ErrNotFound)
		case !inserted:
			errs[ord-1] = fmt.Errorf("store: message %q: %w", r.m.ID, store.ErrConflict)
		}
		seen++
	}
	// Close reads to the end of the statement, its commit included.
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("store: append message: %w", err)
	}
	if seen != n {
		return nil, fmt.Errorf("store: append message: %d answers for %d messages", seen, n)
	}
	g.commits.Add(1)
	if n > 1 {
		g.grouped.Add(1)
	}
	return errs, nil
}

func ptr[T any](v T) *T { return &v }
