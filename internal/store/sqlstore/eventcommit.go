package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/toolport/toolport/internal/store"
)

// Bounds of one event group commit (PostgreSQL).
const (
	maxEventGroupTurns = 64
	maxEventGroupRows  = maxEventBatch
	eventGroupWorkers  = 4
)

// eventGroup commits concurrent fenced AppendTurnEvents calls of different
// turns in one statement on PostgreSQL.
//
// Under a burst every running turn logs small batches of events (a text
// delta at a time), each a statement, a write syscall and a round trip of
// its own: the event log was the largest PostgreSQL-only cost in the
// server's CPU profile. Calls that arrive while a statement runs are
// gathered and sent as arrays in one statement (qGroupEvents) that still
// checks each turn's fence on its own: a turn taken over gets its
// FencedError and its rows are not inserted, the other turns' are. A call
// returns only after its statement committed, as before.
type eventGroup struct {
	db      *DB
	commits atomic.Int64 // statements that carried a group, for tests
	b       *batcher[*eventReq]
}

// eventReq is one AppendTurnEvents call waiting in an eventGroup.
type eventReq struct {
	call
	fence  store.Fence
	events []store.TurnEvent
	note   string // the NOTIFY payload for the last event
}

func newEventGroup(db *DB) *eventGroup {
	g := &eventGroup{db: db}
	g.b = newBatcher(eventGroupWorkers, eventFits, g.commit)
	return g
}

// eventFits keeps one call per turn in a statement (a turn's calls stay in
// order, and its fence and note are checked once) and bounds its rows.
func eventFits(batch []*eventReq, r *eventReq) bool {
	if len(batch) >= maxEventGroupTurns {
		return false
	}
	rows := len(r.events)
	for _, q := range batch {
		if q.fence.TurnID == r.fence.TurnID {
			return false
		}
		rows += len(q.events)
	}
	return rows <= maxEventGroupRows
}

// submit queues a fenced call and waits until it is committed or has failed.
func (g *eventGroup) submit(ctx context.Context, f store.Fence, events []store.TurnEvent, note string) error {
	return submit(ctx, g.b, "append turn events", &eventReq{call: newCall(ctx), fence: f, events: events, note: note})
}

func (g *eventGroup) close() { g.b.close() }

// qGroupEvents inserts the events ($4–$6) of the turns ($1) whose row is
// running under the given generation ($2), and notifies ($7, payloads $3)
// each turn whose rows went in; it returns those turns. The turn rows are
// locked FOR SHARE in id order until commit (the order of renewals and
// take-overs, see lockTurnsInOrder; a take-over cannot commit between check and
// insert) and the statement locks no other row, so it cannot deadlock
// with them.
const qGroupEvents = `WITH f AS MATERIALIZED (SELECT id, generation FROM turns
        WHERE id = ANY($1::text[]) AND state = 'running' ORDER BY id FOR SHARE),
    ok AS MATERIALIZED (SELECT g.id, g.note FROM unnest($1::text[], $2::bigint[], $3::text[]) AS g (id, gen, note)
        JOIN f ON f.id = g.id AND f.generation = g.gen),
    ins AS (INSERT INTO turn_events (turn_id, seq, data)
        SELECT v.turn_id, v.seq, v.data FROM unnest($4::text[], $5::bigint[], $6::text[]) AS v (turn_id, seq, data)
        WHERE v.turn_id IN (SELECT id FROM ok)
        RETURNING turn_id)
SELECT ok.id, pg_notify($7, ok.note) FROM ok WHERE ok.id IN (SELECT turn_id FROM ins)`

// commit writes a batch in one statement (autocommit, on the events' pool),
// not bound to any caller's context: one caller going away must not fail
// the others. A duplicate seq of one turn fails the statement whole: then
// each call is retried alone, so that the conflict is that turn's own.
func (g *eventGroup) commit(batch []*eventReq) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err <- fmt.Errorf("store: append turn events: %w", err)
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	if len(live) == 1 {
		r := live[0]
		r.err <- g.db.appendTurnEventsPostgres(r.ctx, r.fence.TurnID, &r.fence, r.events, r.note)
		return
	}
	n := 0
	for _, r := range live {
		n += len(r.events)
	}
	ids, gens, notes := make([]string, len(live)), make([]int64, len(live)), make([]string, len(live))
	evTurns, seqs, data := make([]string, 0, n), make([]int64, 0, n), make([]string, 0, n)
	for i, r := range live {
		ids[i], gens[i], notes[i] = r.fence.TurnID, r.fence.Generation, r.note
		for _, ev := range r.events {
			evTurns = append(evTurns, r.fence.TurnID)
			seqs = append(seqs, ev.Seq)
			data = append(data, string(ev.Data))
		}
	}
	written, err := g.run(ids, gens, notes, evTurns, seqs, data)
	switch {
	case err != nil && isUniqueViolation(err):
		for _, r := range live {
			r.err <- g.db.appendTurnEventsPostgres(r.ctx, r.fence.TurnID, &r.fence, r.events, r.note)
		}
		return
	case err != nil:
		for _, r := range live {
			r.err <- err
		}
		return
	}
	g.commits.Add(1)
	for _, r := range live {
		if written[r.fence.TurnID] {
			r.err <- nil
		} else {
			r.err <- &store.FencedError{TurnID: r.fence.TurnID, Generation: r.fence.Generation}
		}
	}
}

// run executes qGroupEvents and returns the turns whose events went in.
func (g *eventGroup) run(ids []string, gens []int64, notes, evTurns []string, seqs []int64, data []string) (map[string]bool, error) {
	ctx := context.Background()
	rows, err := g.db.turns.ev.QueryContext(ctx, qGroupEvents, ids, gens, notes, evTurns, seqs, data, g.db.turns.channel)
	if err != nil {
		return nil, fmt.Errorf("store: append turn events: %w", err)
	}
	written := make(map[string]bool, len(ids))
	for rows.Next() {
		var id string
		var sink any
		if err := rows.Scan(&id, &sink); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: append turn events: %w", err)
		}
		written[id] = true
	}
	// Close reads to the end of the statement, its commit included.
	err = errors.Join(rows.Err(), rows.Close())
	if err != nil {
		return nil, fmt.Errorf("store: append turn events: %w", err)
	}
	return written, nil
}
