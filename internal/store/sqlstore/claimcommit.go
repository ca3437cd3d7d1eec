package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolport/toolport/internal/store"
)

// Bounds of one claim group commit (PostgreSQL).
const (
	maxClaimGroup     = 64
	claimGroupWorkers = 4
)

// claimGroup commits concurrent StartTurn claims in one statement on
// PostgreSQL (qGroupClaims). Every message a client sends starts with a
// claim, so a burst of messages was a burst of one-row INSERTs, each a
// round trip and a commit before the turn could read its conversation; a
// batch is one statement and one WAL flush. A call returns only after its
// statement committed, as before. A statement that fails is retried one
// claim at a time, so that the error is that claim's own.
type claimGroup struct {
	db      *DB
	commits atomic.Int64 // statements committed, for tests
	b       *batcher[*claimReq]
}

// claimReq is one StartTurn call waiting in a claimGroup.
type claimReq struct {
	call
	t store.Turn
}

func newClaimGroup(db *DB) *claimGroup {
	g := &claimGroup{db: db}
	g.b = newBatcher(claimGroupWorkers, claimFits, g.commit)
	return g
}

// claimFits keeps one claim per conversation in a statement: of two, one
// must be refused as busy, and alone in its statement the answer is plain.
func claimFits(batch []*claimReq, r *claimReq) bool {
	if len(batch) >= maxClaimGroup {
		return false
	}
	for _, q := range batch {
		if q.t.ConversationID == r.t.ConversationID || q.t.ID == r.t.ID {
			return false
		}
	}
	return true
}

// submit queues claim t and waits until it is committed or has failed.
func (g *claimGroup) submit(ctx context.Context, t store.Turn) error {
	return submit(ctx, g.b, "start turn", &claimReq{call: newCall(ctx), t: t})
}

func (g *claimGroup) close() { g.b.close() }

// qGroupClaims inserts a running turn for each claim of arrays $1–$5 whose
// conversation exists, unless the partial unique index on running turns
// refuses it (the conversation is busy), and answers per claim: it went
// in, its conversation exists. The rows go in conversation order: an
// insert waits on another transaction's insert of the same conversation's
// running turn, and one order keeps two statements from waiting on each
// other.
const qGroupClaims = `WITH v AS MATERIALIZED (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[])
        WITH ORDINALITY AS v (id, conversation_id, owner, lease_until, started_at, ord)),
    ins AS (INSERT INTO turns (id, conversation_id, owner, state, lease_until, started_at)
        SELECT v.id, c.id, v.owner, 'running', v.lease_until, v.started_at
        FROM v JOIN conversations c ON c.id = v.conversation_id ORDER BY c.id
        ON CONFLICT DO NOTHING RETURNING id)
SELECT v.ord, v.id IN (SELECT id FROM ins), EXISTS (SELECT 1 FROM conversations c WHERE c.id = v.conversation_id)
    FROM v`

// commit writes a batch in one statement (autocommit), not bound to any
// caller's context: one caller going away must not fail the others.
func (g *claimGroup) commit(batch []*claimReq) {
	// Sorted, so that the arrays list the claims in the order they are
	// inserted.
	batch = slices.Clone(batch)
	slices.SortFunc(batch, func(x, y *claimReq) int { return strings.Compare(x.t.ConversationID, y.t.ConversationID) })
	writeEach(batch, "start turn", g.run)
}

// run executes qGroupClaims for batch and returns each claim's outcome, or
// the error that failed the statement.
func (g *claimGroup) run(batch []*claimReq) ([]error, error) {
	n := len(batch)
	ids, convs, owners := make([]string, n), make([]string, n), make([]string, n)
	leases, started := make([]time.Time, n), make([]time.Time, n)
	for i, r := range batch {
		ids[i], convs[i], owners[i], leases[i], started[i] = r.t.ID, r.t.ConversationID, r.t.Owner, r.t.LeaseUntil, r.t.StartedAt
	}
	rows, err := g.db.w.QueryContext(context.Background(), qGroupClaims, ids, convs, owners, leases, started)
	if err != nil {
		return nil, fmt.Errorf("store: start turn: %w", err)
	}
	errs := make([]error, n)
	seen := 0
	for rows.Next() {
		var ord int64
		var inserted, exists bool
		if err := rows.Scan(&ord, &inserted, &exists); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: start turn: %w", err)
		}
		if ord < 1 || ord > int64(n) {
			rows.Close()
			return nil, fmt.Errorf("store: start turn: answer for claim %d of %d", ord, n)
		}
		conv := batch[ord-1].t.ConversationID
		switch {
		case inserted:
		case !exists:
			errs[ord-1] = fmt.Errorf("store: conversation %q: %w", conv, store.ErrNotFound)
		default:
			errs[ord-1] = fmt.Errorf("store: conversation %q: %w", conv, store.ErrBusy)
		}
		seen++
	}
	// Close reads to the end of the statement, its commit included.
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("store: start turn: %w", err)
	}
	if seen != n {
		return nil, fmt.Errorf("store: start turn: %d answers for %d claims", seen, n)
	}
	g.commits.Add(1)
	return errs, nil
}
