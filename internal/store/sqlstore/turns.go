package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolport/toolport/internal/store"
)

var _ store.Turns = (*DB)(nil)

// turnNotes carries turn notes between the processes sharing the store.
//
// On PostgreSQL a note is a NOTIFY on a channel named after the schema, sent
// in the statement that makes the change (so it goes out at commit, never
// before the row is visible); each watcher LISTENs on a connection of its
// own. Event rows go through a pool of their own with synchronous_commit off:
// the log is a replay buffer for reconnecting clients (the answer itself is
// saved as a message, durably), and waiting for a WAL flush per text delta
// would put a disk sync in front of every event.
//
// On SQLite (one process) notes go from writer to watchers in memory.
type turnNotes struct {
	dsn     string  // PostgreSQL only
	channel string  // PostgreSQL only
	ev      *sql.DB // where event rows are written

	mu       sync.Mutex
	watchers map[int]func(store.TurnNote)
	next     int

	listening atomic.Int32 // PostgreSQL: LISTEN connections up
}

// initTurns prepares turn notes; target is the PostgreSQL DSN.
func (db *DB) initTurns(ctx context.Context, target string) error {
	n := &turnNotes{ev: db.w, watchers: map[int]func(store.TurnNote){}}
	db.turns = n
	if db.d.name != store.EnginePostgres {
		return nil
	}
	var schema string
	if err := db.w.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("store: turn notes: %w", err)
	}
	n.dsn, n.channel = target, "toolport_turns."+schema
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("%w: malformed PostgreSQL URL", store.ErrInvalid)
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	ev, err := sql.Open("pgx", u.String())
	if err != nil {
		return fmt.Errorf("%w: malformed PostgreSQL URL", store.ErrInvalid)
	}
	ev.SetMaxOpenConns(8)
	ev.SetMaxIdleConns(8)
	ev.SetConnMaxIdleTime(5 * time.Minute)
	n.ev = ev
	return nil
}

func (n *turnNotes) close() error {
	if n == nil || n.dsn == "" {
		return nil
	}
	return n.ev.Close()
}

// publish delivers a note to this process's watchers (SQLite).
func (n *turnNotes) publish(note store.TurnNote) {
	n.mu.Lock()
	fns := make([]func(store.TurnNote), 0, len(n.watchers))
	for _, fn := range n.watchers {
		fns = append(fns, fn)
	}
	n.mu.Unlock()
	for _, fn := range fns {
		fn(note)
	}
}

// encodeNote and parseNote are the NOTIFY payload: "<kind> <turn id>[ <seq>]".
func encodeNote(n store.TurnNote) string {
	s := string(rune(n.Kind)) + " " + n.TurnID
	if n.Kind == store.NoteEvent {
		s += " " + strconv.FormatInt(n.Seq, 10)
	}
	return s
}

func parseNote(payload string) (store.TurnNote, bool) {
	kind, rest, ok := strings.Cut(payload, " ")
	if !ok || len(kind) != 1 || rest == "" {
		return store.TurnNote{}, false
	}
	n := store.TurnNote{Kind: store.TurnNoteKind(kind[0])}
	switch n.Kind {
	case store.NoteEvent:
		id, seq, ok := strings.Cut(rest, " ")
		v, err := strconv.ParseInt(seq, 10, 64)
		if !ok || err != nil || v <= 0 || id == "" {
			return store.TurnNote{}, false
		}
		n.TurnID, n.Seq = id, v
	case store.NoteStop, store.NoteEnd:
		if strings.Contains(rest, " ") {
			return store.TurnNote{}, false
		}
		n.TurnID = rest
	default:
		return store.TurnNote{}, false
	}
	return n, true
}

// notify sends a note after a change committed outside a statement that
// could carry it.
func (db *DB) notify(ctx context.Context, n store.TurnNote) {
	if db.d.name != store.EnginePostgres {
		db.turns.publish(n)
		return
	}
	// A lost note only delays watchers until their next poll.
	_, _ = db.w.ExecContext(ctx, `SELECT pg_notify($1, $2)`, db.turns.channel, encodeNote(n))
}

const turnColumns = `id, conversation_id, owner, state, lease_until, stop_requested, started_at, ended_at, generation`

func scanTurn(sc interface{ Scan(...any) error }) (store.Turn, error) {
	var t store.Turn
	var lease, started, ended dbTime
	var state string
	if err := sc.Scan(&t.ID, &t.ConversationID, &t.Owner, &state, &lease, &t.StopRequested, &started, &ended, &t.Generation); err != nil {
		return store.Turn{}, err
	}
	t.State, t.LeaseUntil, t.StartedAt, t.EndedAt = store.TurnState(state), lease.t, started.t, ended.t
	return t, nil
}

// Statements of a turn's life (prepared on SQLite).
const (
	qStartTurn = `INSERT INTO turns (id, conversation_id, owner, state, lease_until, started_at)
        SELECT $1, id, $3, 'running', $4, $5 FROM conversations WHERE id = $2
        ON CONFLICT DO NOTHING`
	qEndTurn = `UPDATE turns SET state = $1, ended_at = $2
        WHERE id = $3 AND owner = $4 AND state = 'running'`
	qInsertTurnEvent = `INSERT INTO turn_events (turn_id, seq, data) VALUES ($1, $2, $3)`
	qEndTurnFenced   = qEndTurn + ` AND generation = $5`
	// qCheckFence finds a turn still running under a generation. On
	// PostgreSQL the row is also locked (FOR SHARE) until the writer's
	// transaction ends, so that a take-over cannot commit between the check
	// and the write; SQLite's one writer serialises them anyway.
	qCheckFence         = `SELECT 1 FROM turns WHERE id = $1 AND generation = $2 AND state = 'running'`
	qCheckFencePostgres = qCheckFence + ` FOR SHARE`
)

// checkFence refuses a write made under fence f, in the write's
// transaction tx, when f's turn no longer runs under its generation.
func (db *DB) checkFence(ctx context.Context, tx *sql.Tx, f store.Fence) error {
	q := qCheckFence
	if db.d.name == store.EnginePostgres {
		q = qCheckFencePostgres
	}
	var one int
	err := db.queryRowTx(ctx, tx, q, f.TurnID, f.Generation).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return &store.FencedError{TurnID: f.TurnID, Generation: f.Generation}
	}
	if err != nil {
		return fmt.Errorf("store: checking the turn's fence: %w", err)
	}
	return nil
}

// fenceOf returns the fence a write is made under when it guards turn id
// ("": any turn): not for a nil or zero fence, which guards nothing.
func fenceOf(f *store.Fence, id string) (store.Fence, bool) {
	if f == nil || f.TurnID == "" || id != "" && f.TurnID != id {
		return store.Fence{}, false
	}
	return *f, true
}

// fencePtr is fenceOf for a group-committed write: nil without a fence.
func fencePtr(f *store.Fence, id string) *store.Fence {
	if f, ok := fenceOf(f, id); ok {
		return &f
	}
	return nil
}

// StartTurn claims a conversation for a new turn with one conditional INSERT:
// the partial unique index on running turns refuses a second one.
func (db *DB) StartTurn(ctx context.Context, t store.Turn) (store.Turn, error) {
	if t.ID == "" || t.ConversationID == "" || t.Owner == "" {
		return store.Turn{}, fmt.Errorf("%w: a turn needs an id, a conversation and an owner", store.ErrInvalid)
	}
	if err := validText("turn", t.ID, t.ConversationID, t.Owner); err != nil {
		return store.Turn{}, err
	}
	t.State, t.StartedAt, t.EndedAt, t.StopRequested, t.Generation = store.TurnRunning, now(), time.Time{}, false, 1
	t.LeaseUntil = normTime(t.LeaseUntil)
	// SQLite's claim, in the appender's batch transaction.
	claim := func(ctx context.Context, tx *sql.Tx) error {
		x := preparedTx{db, tx}
		res, err := x.ExecContext(ctx, qStartTurn,
			t.ID, t.ConversationID, t.Owner, db.d.time(t.LeaseUntil), db.d.time(t.StartedAt))
		if err != nil {
			return fmt.Errorf("store: start turn: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("store: start turn: %w", err)
		} else if n == 1 {
			return nil
		}
		var exists int
		err = x.QueryRowContext(ctx, `SELECT count(*) FROM conversations WHERE id = $1`, t.ConversationID).Scan(&exists)
		if err != nil {
			return fmt.Errorf("store: start turn: %w", err)
		}
		if exists == 0 {
			return fmt.Errorf("store: conversation %q: %w", t.ConversationID, store.ErrNotFound)
		}
		return fmt.Errorf("store: conversation %q: %w", t.ConversationID, store.ErrBusy)
	}
	var err error
	if db.claims != nil {
		// PostgreSQL: committed with other turns' claims (see claimGroup).
		err = db.claims.submit(ctx, t)
	} else {
		// Committed with other turns' writes (see appender): under a burst
		// every turn's claim waited for the one writer on its own, before
		// the turn could send anything.
		err = db.appends.submit(ctx, "start turn", true, nil, claim)
	}
	if err != nil {
		return store.Turn{}, err
	}
	return t, nil
}

// execQuerier is what a turn write runs on: a pool or a batch's transaction.
type execQuerier interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// preparedTx runs statements in a transaction through the writer's
// prepared statements where there are some.
type preparedTx struct {
	db *DB
	tx *sql.Tx
}

func (p preparedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return p.db.execTx(ctx, p.tx, q, args...)
}

func (p preparedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return p.db.queryRowTx(ctx, p.tx, q, args...)
}

// lockTurnsInOrder is the start of a statement that updates several turns
// on PostgreSQL: CTE l locks the rows that where selects, in id order, so
// that renewals, take-overs and group-committed statements (see qGroupMessages)
// take turn locks in one global order and cannot deadlock. MATERIALIZED
// keeps the lock and its order in l rather than folded into the UPDATE's
// join, which would lock in whatever order it scans.
func lockTurnsInOrder(where string) string {
	return `WITH l AS MATERIALIZED (SELECT id AS locked FROM turns WHERE ` + where +
		` ORDER BY id FOR NO KEY UPDATE) UPDATE turns SET `
}

// qDeleteConversation is the statement that deletes conversation $1 if
// cond (more of its WHERE, "" for none) holds. On PostgreSQL CTE l first
// locks the conversation's turn rows in id order, before the statement
// locks the conversation (the statement references l: an unreferenced CTE
// is not run). Every other writer that locks both a turn and a conversation
// takes the turn first (the fences of message batches,
// TruncateConversation); the delete's cascade alone would lock the
// conversation, then its turns, and could deadlock against a fenced write
// to a turn whose lease lapsed.
func (db *DB) qDeleteConversation(cond string) string {
	q := `DELETE FROM conversations WHERE id = $1` + cond
	if db.d.name == store.EnginePostgres {
		q = `WITH l AS MATERIALIZED (SELECT id FROM turns WHERE conversation_id = $1 ORDER BY id FOR UPDATE) ` +
			q + ` AND (SELECT count(*) FROM l) >= 0`
	}
	return q
}

// RenewTurns extends owner's leases in one statement.
func (db *DB) RenewTurns(ctx context.Context, owner string, ids []string, until time.Time) (map[string]bool, error) {
	out := map[string]bool{}
	for _, chunk := range chunks(ids, lookupChunk) {
		args := append([]any{db.d.time(normTime(until)), owner}, chunk...)
		where := `owner = $2 AND state = 'running' AND id IN (` + placeholders(3, len(chunk)) + `)`
		q := `UPDATE turns SET lease_until = $1 WHERE ` + where
		if db.d.name == store.EnginePostgres {
			q = lockTurnsInOrder(where) + `lease_until = $1 FROM l WHERE id = l.locked`
		}
		rows, err := db.w.QueryContext(ctx, q+` RETURNING id, stop_requested`, args...)
		if err != nil {
			return nil, fmt.Errorf("store: renew turns: %w", err)
		}
		for rows.Next() {
			var id string
			var stop bool
			if err := rows.Scan(&id, &stop); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: renew turns: %w", err)
			}
			out[id] = stop
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: renew turns: %w", err)
		}
	}
	return out, nil
}

// EndTurn ends a running turn and notes it.
func (db *DB) EndTurn(ctx context.Context, id, owner string, state store.TurnState) (bool, error) {
	return db.endTurn(ctx, nil, id, owner, state)
}

// endTurn is EndTurn under f, when not nil.
func (db *DB) endTurn(ctx context.Context, f *store.Fence, id, owner string, state store.TurnState) (bool, error) {
	if state != store.TurnDone && state != store.TurnIncomplete {
		return false, fmt.Errorf("%w: turn state %q", store.ErrInvalid, state)
	}
	var n int64
	q, args := qEndTurn, []any{string(state), db.d.time(now()), id, owner}
	fence, fenced := fenceOf(f, id)
	if fenced {
		q, args = qEndTurnFenced, append(args, fence.Generation)
	}
	end := func(ctx context.Context, x execQuerier) error {
		res, err := x.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("store: end turn: %w", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("store: end turn: %w", err)
		}
		return nil
	}
	note := store.TurnNote{Kind: store.NoteEnd, TurnID: id}
	if db.d.name == store.EnginePostgres {
		// The note rides on the update, as on an event append: one
		// statement and one commit instead of two, and it goes out at
		// commit only when the row changed. A SELECT's command tag counts
		// its rows: those the UPDATE returned.
		// The fence, when there is one, is the update's own condition.
		ch := len(args) + 1
		res, err := db.w.ExecContext(ctx,
			fmt.Sprintf(`WITH upd AS (%s RETURNING id) SELECT pg_notify($%d, $%d) FROM upd`, q, ch, ch+1),
			append(args, db.turns.channel, encodeNote(note))...)
		if err != nil {
			return false, fmt.Errorf("store: end turn: %w", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return false, fmt.Errorf("store: end turn: %w", err)
		}
		if n == 0 && fenced {
			return false, &store.FencedError{TurnID: id, Generation: fence.Generation}
		}
		return n == 1, nil
	}
	// Committed with other turns' writes (see appender).
	// The fence is the update's own condition.
	err := db.appends.submit(ctx, "end turn", false, nil, func(ctx context.Context, tx *sql.Tx) error {
		return end(ctx, preparedTx{db, tx})
	})
	if err != nil {
		return false, err
	}
	if n == 1 {
		db.notify(ctx, note)
	}
	if n == 0 && fenced {
		return false, &store.FencedError{TurnID: id, Generation: fence.Generation}
	}
	return n == 1, nil
}

// TakeOverTurns moves lapsed leases to owner with UPDATE … RETURNING, so
// each lapsed turn goes to the one caller whose statement changed it.
func (db *DB) TakeOverTurns(ctx context.Context, at time.Time, conversationID, owner string, until time.Time, keep []string) ([]store.Turn, error) {
	where := `state = 'running' AND lease_until < $1`
	args := []any{db.d.time(normTime(at)), owner, db.d.time(normTime(until))}
	if conversationID != "" {
		args = append(args, conversationID)
		where += fmt.Sprintf(` AND conversation_id = $%d`, len(args))
	}
	if len(keep) > 0 {
		// One parameter however many: an array on PostgreSQL, a JSON
		// array on SQLite.
		if db.d.name == store.EnginePostgres {
			args = append(args, keep)
			where += fmt.Sprintf(` AND NOT (id = ANY($%d::text[]))`, len(args))
		} else {
			list, err := json.Marshal(keep)
			if err != nil {
				return nil, fmt.Errorf("store: take over turns: %w", err)
			}
			args = append(args, string(list))
			where += fmt.Sprintf(` AND id NOT IN (SELECT value FROM json_each($%d))`, len(args))
		}
	}
	set := `owner = $2, lease_until = $3, generation = generation + 1`
	q := `UPDATE turns SET ` + set + ` WHERE ` + where
	if db.d.name == store.EnginePostgres {
		// The lock's re-check of where, after waiting for a row, leaves
		// out a turn renewed or ended meanwhile.
		q = lockTurnsInOrder(where) + set + ` FROM l WHERE id = l.locked`
	}
	rows, err := db.w.QueryContext(ctx, q+` RETURNING `+turnColumns, args...)
	if err != nil {
		return nil, fmt.Errorf("store: take over turns: %w", err)
	}
	var out []store.Turn
	for rows.Next() {
		t, err := scanTurn(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: take over turns: %w", err)
		}
		out = append(out, t)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("store: take over turns: %w", err)
	}
	return out, nil
}

// GetTurn returns a turn or [store.ErrNotFound].
func (db *DB) GetTurn(ctx context.Context, id string) (store.Turn, error) {
	t, err := scanTurn(db.r.QueryRowContext(ctx, `SELECT `+turnColumns+` FROM turns WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Turn{}, fmt.Errorf("store: turn %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Turn{}, fmt.Errorf("store: get turn: %w", err)
	}
	return t, nil
}

// RunningTurn returns a conversation's running turn or [store.ErrNotFound].
func (db *DB) RunningTurn(ctx context.Context, conversationID string) (store.Turn, error) {
	t, err := scanTurn(db.r.QueryRowContext(ctx, `SELECT `+turnColumns+` FROM turns
        WHERE conversation_id = $1 AND state = 'running'`, conversationID))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Turn{}, fmt.Errorf("store: running turn of %q: %w", conversationID, store.ErrNotFound)
	}
	if err != nil {
		return store.Turn{}, fmt.Errorf("store: running turn: %w", err)
	}
	return t, nil
}

// RequestStop flags a running turn and notes it to its owner.
func (db *DB) RequestStop(ctx context.Context, id string) (bool, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE turns SET stop_requested = TRUE WHERE id = $1 AND state = 'running'`, id)
	if err != nil {
		return false, fmt.Errorf("store: stop turn: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: stop turn: %w", err)
	}
	if n == 1 {
		db.notify(ctx, store.TurnNote{Kind: store.NoteStop, TurnID: id})
	}
	return n == 1, nil
}

// maxEventBatch bounds the rows of one multi-row INSERT (3 parameters each).
const maxEventBatch = 200

// AppendTurnEvents logs events in one transaction: on SQLite a prepared
// insert per row, group-committed with other writes; on PostgreSQL
// multi-row INSERTs, the last of which also NOTIFYs the last seq.
func (db *DB) AppendTurnEvents(ctx context.Context, turnID string, events []store.TurnEvent) error {
	return db.appendTurnEvents(ctx, nil, turnID, events)
}

// appendTurnEvents is AppendTurnEvents under f, when not nil.
func (db *DB) appendTurnEvents(ctx context.Context, f *store.Fence, turnID string, events []store.TurnEvent) error {
	if len(events) == 0 {
		return nil
	}
	for _, ev := range events {
		if ev.Seq <= 0 {
			return fmt.Errorf("%w: event seq %d", store.ErrInvalid, ev.Seq)
		}
		if len(ev.Data) > store.MaxTurnEventBytes {
			return fmt.Errorf("%w: event larger than %d bytes", store.ErrInvalid, store.MaxTurnEventBytes)
		}
		if err := validText("turn event", string(ev.Data)); err != nil {
			return err
		}
	}
	note := store.TurnNote{Kind: store.NoteEvent, TurnID: turnID, Seq: events[len(events)-1].Seq}
	fence, fenced := fenceOf(f, turnID)
	if db.d.name != store.EnginePostgres {
		// Committed with other turns' events and messages (see appender),
		// one prepared row at a time: cheaper on SQLite than parsing a
		// multi-row statement of a new length on every call.
		// A turn's first event goes ahead of other writes: its client waits.
		err := db.appends.submit(ctx, "append turn events", events[0].Seq == 1, fencePtr(f, turnID), func(ctx context.Context, tx *sql.Tx) error {
			for _, ev := range events {
				if _, err := db.execTx(ctx, tx, qInsertTurnEvent, turnID, ev.Seq, string(ev.Data)); err != nil {
					if isUniqueViolation(err) {
						return fmt.Errorf("store: turn %q events: %w", turnID, store.ErrConflict)
					}
					return fmt.Errorf("store: append turn events: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		db.turns.publish(note)
		return nil
	}
	if fenced && len(events) <= maxEventGroupRows {
		// Group-committed with other turns' calls (see eventGroup).
		return db.events.submit(ctx, fence, events, encodeNote(note))
	}
	return db.appendTurnEventsPostgres(ctx, turnID, fencePtr(f, turnID), events, encodeNote(note))
}

// appendTurnEventsPostgres logs one turn's events on PostgreSQL, under fence
// if it is not nil, notifying note.
func (db *DB) appendTurnEventsPostgres(ctx context.Context, turnID string, fence *store.Fence, events []store.TurnEvent, note string) error {
	fenced := fence != nil
	// One statement per maxEventBatch rows, in a transaction only when
	// there are several. With a fence each statement carries it: its rows
	// are inserted only from f's row, which it locks FOR SHARE until commit
	// (a take-over cannot commit between the check and the insert), so an
	// insert of no rows is a fenced one.
	x := execQuerier(db.turns.ev)
	if len(events) > maxEventBatch {
		tx, err := db.turns.ev.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store: append turn events: %w", err)
		}
		defer rollback(tx)
		x = tx
	}
	for start := 0; start < len(events); start += maxEventBatch {
		batch := events[start:min(start+maxEventBatch, len(events))]
		last := start+maxEventBatch >= len(events)
		var q strings.Builder
		args := make([]any, 0, 2*len(batch)+5)
		args = append(args, turnID)
		if fenced {
			args = append(args, fence.Generation)
			q.WriteString(`WITH f AS (SELECT 1 FROM turns WHERE id = $1 AND generation = $2 AND state = 'running' FOR SHARE),
    ins AS (INSERT INTO turn_events (turn_id, seq, data) SELECT $1, v.seq, v.data FROM f, (VALUES `)
		} else {
			q.WriteString(`WITH ins AS (INSERT INTO turn_events (turn_id, seq, data) SELECT $1, v.seq, v.data FROM (VALUES `)
		}
		for i, ev := range batch {
			if i > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "($%d::bigint, $%d::text)", len(args)+1, len(args)+2)
			args = append(args, ev.Seq, string(ev.Data))
		}
		q.WriteString(`) AS v (seq, data) RETURNING seq) `)
		if last {
			// The note rides on the last statement (sent at commit).
			fmt.Fprintf(&q, `SELECT pg_notify($%d, $%d) FROM ins LIMIT 1`, len(args)+1, len(args)+2)
			args = append(args, db.turns.channel, note)
		} else {
			q.WriteString(`SELECT 1 FROM ins LIMIT 1`)
		}
		res, err := x.ExecContext(ctx, q.String(), args...)
		if err != nil {
			if isUniqueViolation(err) {
				return fmt.Errorf("store: turn %q events: %w", turnID, store.ErrConflict)
			}
			return fmt.Errorf("store: append turn events: %w", err)
		}
		if fenced {
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("store: append turn events: %w", err)
			} else if n == 0 {
				return &store.FencedError{TurnID: fence.TurnID, Generation: fence.Generation}
			}
		}
	}
	if tx, ok := x.(*sql.Tx); ok {
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store: append turn events: %w", err)
		}
	}
	return nil
}

// isUniqueViolation recognises a duplicate key on either engine.
func isUniqueViolation(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLSTATE 23505") || strings.Contains(msg, "UNIQUE constraint failed")
}

// TurnEvents reads a turn's log after seq after.
func (db *DB) TurnEvents(ctx context.Context, turnID string, after int64, limit int) ([]store.TurnEvent, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	rows, err := db.r.QueryContext(ctx, `SELECT seq, data FROM turn_events
        WHERE turn_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, turnID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: turn events: %w", err)
	}
	defer rows.Close()
	var out []store.TurnEvent
	for rows.Next() {
		var ev store.TurnEvent
		var data string
		if err := rows.Scan(&ev.Seq, &data); err != nil {
			return nil, fmt.Errorf("store: turn events: %w", err)
		}
		ev.Data = []byte(data)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: turn events: %w", err)
	}
	return out, nil
}

// DeleteEndedTurns drops ended turns and, by cascade, their events.
func (db *DB) DeleteEndedTurns(ctx context.Context, before time.Time) (int, error) {
	res, err := db.w.ExecContext(ctx, `DELETE FROM turns WHERE state <> 'running' AND ended_at < $1`, db.d.time(normTime(before)))
	if err != nil {
		return 0, fmt.Errorf("store: delete ended turns: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: delete ended turns: %w", err)
	}
	return int(n), nil
}

// DeleteIdleConversation deletes a conversation in one statement that
// checks there is no live turn in it.
func (db *DB) DeleteIdleConversation(ctx context.Context, id string, at time.Time) error {
	q := db.qDeleteConversation(` AND NOT EXISTS (
        SELECT 1 FROM turns WHERE conversation_id = $1 AND state = 'running' AND lease_until >= $2)`)
	res, err := db.w.ExecContext(ctx, q, id, db.d.time(normTime(at)))
	if err != nil {
		return fmt.Errorf("store: delete conversation: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: delete conversation: %w", err)
	}
	if n == 1 {
		return nil
	}
	var exists int
	if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM conversations WHERE id = $1`, id).Scan(&exists); err != nil {
		return fmt.Errorf("store: delete conversation: %w", err)
	}
	if exists == 0 {
		return fmt.Errorf("store: conversation %q: %w", id, store.ErrNotFound)
	}
	return fmt.Errorf("store: conversation %q: %w", id, store.ErrBusy)
}

// WatchTurns delivers notes until ctx ends. On PostgreSQL it LISTENs on a
// connection of its own and reconnects (with a NoteResync) when it drops.
func (db *DB) WatchTurns(ctx context.Context, fn func(store.TurnNote)) error {
	n := db.turns
	if db.d.name != store.EnginePostgres {
		n.mu.Lock()
		id := n.next
		n.next++
		n.watchers[id] = fn
		n.mu.Unlock()
		<-ctx.Done()
		n.mu.Lock()
		delete(n.watchers, id)
		n.mu.Unlock()
		return nil
	}
	backoff := 100 * time.Millisecond
	for first := true; ; first = false {
		err := n.listen(ctx, fn, !first)
		if ctx.Err() != nil {
			return nil
		}
		_ = err // the connection dropped; try again
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// listen runs one LISTEN connection until it fails or ctx ends.
func (n *turnNotes) listen(ctx context.Context, fn func(store.TurnNote), resync bool) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.Connect(cctx, n.dsn)
	cancel()
	if err != nil {
		return fmt.Errorf("store: listen: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{n.channel}.Sanitize()); err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	n.listening.Add(1)
	defer n.listening.Add(-1)
	if resync {
		// Notes sent while no connection listened are lost.
		fn(store.TurnNote{Kind: store.NoteResync})
	}
	for {
		msg, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("store: listen: %w", err)
		}
		if note, ok := parseNote(msg.Payload); ok {
			fn(note)
		}
	}
}

// TurnNotesHealth reports whether this process receives other processes'
// turn notes: on PostgreSQL, whether a LISTEN connection is up (without one,
// streams following other replicas' turns fall back to polling and stop
// requests wait for the next lease renewal). SQLite needs none.
func (db *DB) TurnNotesHealth(context.Context) error {
	if db.d.name != store.EnginePostgres || db.turns.listening.Load() > 0 {
		return nil
	}
	return errors.New("not listening for turn notes (LISTEN connection down)")
}
