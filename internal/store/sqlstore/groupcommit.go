package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolport/toolport/internal/store"
)

// maxAppendBatch bounds how many appends share one transaction.
const maxAppendBatch = 64

// postgresAppendWorkers is how many batches commit at once on PostgreSQL.
const postgresAppendWorkers = 4

// The savepoint that keeps one append's failure from failing its batch.
const (
	qSavepointAppend = `SAVEPOINT append_one`
	qRollbackAppend  = `ROLLBACK TO append_one`
	qReleaseAppend   = `RELEASE append_one`
)

// errClosed is returned by writes queued when the store closes.
var errClosed = errors.New("store: closed")

// appender commits concurrent AppendMessage calls together, and on SQLite
// turn events (AppendTurnEvents) with them.
//
// SQLite has one writer: every transaction queues for it, so under a burst of
// chat turns each user message waits for all the commits before its own, and
// the turn's first event waits with it. On PostgreSQL each commit waits for
// its own WAL flush; batching makes one flush serve many appends, without
// synchronous_commit=off (an acknowledged message is never lost). Appends
// that arrive while a commit is
// running are gathered and committed in one transaction, each in a savepoint
// so that one failing (an unknown conversation, a duplicate id) does not fail
// the others. A call still returns only after its message is durable.
// On SQLite the turns' event logs go through the same batches: under a burst
// every turn's first event is a write, and each waited for the one writer
// in a transaction of its own.
//
// A write made under a turn's fence runs only if the fence holds, checked
// in the batch's transaction: on PostgreSQL for the whole batch in one
// statement that locks the turns' rows in id order before any other row
// (see qLockFences), on SQLite (one writer) a SELECT per write.
type appender struct {
	db      *DB
	commits atomic.Int64 // transactions committed, for tests
	reqs    chan *appendReq
	first   chan *appendReq // writes a client's first event waits for
	quit    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// appendReq is one write of a batch: run inside the batch's transaction.
// Rows are locked in key order (a conversation id; "" sorts first).
type appendReq struct {
	ctx   context.Context
	key   string
	op    string       // names the write in errors: "append message"
	fence *store.Fence // checked before run, in the batch's transaction
	run   func(ctx context.Context, tx *sql.Tx) error
	err   chan error
}

// newAppender starts workers loops that each commit a batch at a time. SQLite
// needs one (it has one writer); on PostgreSQL a few run side by side, so that
// a batch's statements (several round trips per message) do not hold up
// appends that a parallel transaction could commit meanwhile.
func newAppender(db *DB, workers int) *appender {
	a := &appender{db: db, reqs: make(chan *appendReq), first: make(chan *appendReq),
		quit: make(chan struct{}), done: make(chan struct{})}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(a.loop)
	}
	go func() { wg.Wait(); close(a.done) }()
	return a
}

// do queues m and waits until it is committed or has failed. A user's
// message goes ahead of other writes: a turn's first event waits for it.
func (a *appender) do(ctx context.Context, m store.Message) error {
	return a.submit(ctx, m.ConversationID, "append message", m.Role == store.RoleUser, fencePtr(ctx, ""), func(ctx context.Context, tx *sql.Tx) error {
		return a.db.appendInTx(ctx, tx, m)
	})
}

// submit queues a write and waits until it is committed or has failed.
// Writes that a client's first event waits for (ahead) are taken into
// batches before the others: under a burst of turns, claims and user
// messages would otherwise queue behind every running turn's answer
// updates and event logs, and each new turn's first event with them.
// With a fence the write runs only if the fence holds (see commit).
func (a *appender) submit(ctx context.Context, key, op string, ahead bool, fence *store.Fence, run func(context.Context, *sql.Tx) error) error {
	r := &appendReq{ctx: ctx, key: key, op: op, fence: fence, run: run, err: make(chan error, 1)}
	q := a.reqs
	if ahead {
		q = a.first
	}
	select {
	case q <- r:
	case <-ctx.Done():
		return fmt.Errorf("store: %s: %w", op, ctx.Err())
	case <-a.quit:
		return errClosed
	}
	return <-r.err // the loop answers every request it took
}

// close stops the loop after the batch in progress.
func (a *appender) close() {
	a.once.Do(func() { close(a.quit) })
	<-a.done
}

func (a *appender) loop() {
	for {
		var first *appendReq
		select {
		case first = <-a.first:
		case first = <-a.reqs:
		case <-a.quit:
			return
		}
		batch := []*appendReq{first}
		// The writes waited for first fill the batch first; the others
		// take the room left, so they are never starved.
		for _, q := range []chan *appendReq{a.first, a.reqs} {
		gather:
			for len(batch) < maxAppendBatch {
				select {
				case r := <-q:
					batch = append(batch, r)
				default:
					break gather
				}
			}
		}
		a.commit(batch)
	}
}

// commit runs a batch in one transaction. The transaction is not bound to any
// caller's context (one caller going away must not undo the others); a caller
// whose context is already done is answered with its error and skipped.
func (a *appender) commit(batch []*appendReq) {
	errs := make([]error, len(batch))
	fail := func(err error) {
		for i, r := range batch {
			if errs[i] == nil {
				errs[i] = err
			}
			r.err <- errs[i]
		}
	}
	// Rows are locked in conversation order (a stable sort keeps each
	// conversation's appends in arrival order), so that batches of several
	// processes sharing a PostgreSQL database cannot deadlock on each other.
	order := make([]int, len(batch))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return strings.Compare(batch[x].key, batch[y].key)
	})
	ctx := context.Background()
	tx, err := a.db.w.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("store: append message: %w", err))
		return
	}
	defer rollback(tx)
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = fmt.Errorf("store: %s: %w", r.op, err)
		}
	}
	if a.db.d.name == store.EnginePostgres {
		if err := a.lockFences(ctx, tx, batch, errs); err != nil {
			fail(err)
			return
		}
	}
	for _, i := range order {
		r := batch[i]
		if errs[i] != nil {
			continue
		}
		if _, err := a.db.execTx(ctx, tx, qSavepointAppend); err != nil {
			fail(fmt.Errorf("store: append message: %w", err))
			return
		}
		var err error
		if r.fence != nil && a.db.d.name != store.EnginePostgres {
			err = a.db.checkFence(ctx, tx, *r.fence)
		}
		if err == nil {
			err = r.run(ctx, tx)
		}
		if err != nil {
			errs[i] = err
			if _, err := a.db.execTx(ctx, tx, qRollbackAppend); err != nil {
				fail(fmt.Errorf("store: append message: %w", err))
				return
			}
		}
		if _, err := a.db.execTx(ctx, tx, qReleaseAppend); err != nil {
			fail(fmt.Errorf("store: append message: %w", err))
			return
		}
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("store: append message: %w", err))
		return
	}
	a.commits.Add(1)
	for i, r := range batch {
		r.err <- errs[i]
	}
}

// qLockFences locks (FOR SHARE, until the batch commits) the running turns
// among $1 in id order and returns their generations. Lease renewals and
// take-overs lock turn rows in the same order (see RenewTurns), and a batch
// takes all its turn locks before any conversation row, so that no cycle of
// waits can form between them. Locking in arrival or conversation order
// did deadlock a batch with a renewal (each held a row the other wanted).
// LockRows runs above the Sort, so the rows are locked in the sorted order.
const qLockFences = `SELECT id, generation FROM turns
        WHERE id = ANY($1::text[]) AND state = 'running' ORDER BY id FOR SHARE`

// lockFences checks the fences of a batch's live writes in one statement
// (PostgreSQL): a write whose turn no longer runs under its generation gets
// a [*store.FencedError] in errs and is not run. The row locks keep a
// take-over from committing before the batch does.
func (a *appender) lockFences(ctx context.Context, tx *sql.Tx, batch []*appendReq, errs []error) error {
	var ids []string
	for i, r := range batch {
		if r.fence != nil && errs[i] == nil {
			ids = append(ids, r.fence.TurnID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	rows, err := tx.QueryContext(ctx, qLockFences, ids)
	if err != nil {
		return fmt.Errorf("store: checking the turns' fences: %w", err)
	}
	held := make(map[string]int64, len(ids))
	for rows.Next() {
		var id string
		var gen int64
		if err := rows.Scan(&id, &gen); err != nil {
			rows.Close()
			return fmt.Errorf("store: checking the turns' fences: %w", err)
		}
		held[id] = gen
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return fmt.Errorf("store: checking the turns' fences: %w", err)
	}
	for i, r := range batch {
		if r.fence == nil || errs[i] != nil {
			continue
		}
		if gen, ok := held[r.fence.TurnID]; !ok || gen != r.fence.Generation {
			errs[i] = &store.FencedError{TurnID: r.fence.TurnID, Generation: r.fence.Generation}
		}
	}
	return nil
}
