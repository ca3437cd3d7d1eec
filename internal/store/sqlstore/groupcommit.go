package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/toolport/toolport/internal/store"
)

// maxAppendBatch bounds how many appends share one transaction.
const maxAppendBatch = 64

// The savepoint that keeps one append's failure from failing its batch.
const (
	qSavepointAppend = `SAVEPOINT append_one`
	qRollbackAppend  = `ROLLBACK TO append_one`
	qReleaseAppend   = `RELEASE append_one`
)

// errClosed is returned by writes queued when the store closes.
var errClosed = errors.New("store: closed")

// appender commits SQLite's writes of chat turns together: message appends
// and updates, turn claims, ends and event logs.
//
// SQLite has one writer: every transaction queues for it, so under a burst of
// chat turns each user message waits for all the commits before its own, and
// the turn's first event waits with it. Writes that arrive while a commit is
// running are gathered and committed in one transaction, each in a savepoint
// so that one failing (an unknown conversation, a duplicate id) does not fail
// the others. A call still returns only after its write is durable. A write
// made under a turn's fence runs only if the fence holds, checked in the
// batch's transaction (one writer: nothing can take the turn over between
// the check and the commit).
//
// PostgreSQL writes each kind in one statement per batch instead (see
// claimGroup, messageGroup, eventGroup).
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
type appendReq struct {
	ctx   context.Context
	op    string       // names the write in errors: "append message"
	fence *store.Fence // checked before run, in the batch's transaction
	run   func(ctx context.Context, tx *sql.Tx) error
	err   chan error
}

// newAppender starts the loop that commits a batch at a time.
func newAppender(db *DB) *appender {
	a := &appender{db: db, reqs: make(chan *appendReq), first: make(chan *appendReq),
		quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.loop()
	}()
	return a
}

// do queues m and waits until it is committed or has failed. A user's
// message goes ahead of other writes: a turn's first event waits for it.
func (a *appender) do(ctx context.Context, m store.Message) error {
	return a.submit(ctx, "append message", m.Role == store.RoleUser, fencePtr(ctx, ""), func(ctx context.Context, tx *sql.Tx) error {
		return a.db.appendInTx(ctx, tx, m)
	})
}

// submit queues a write and waits until it is committed or has failed.
// Writes that a client's first event waits for (ahead) are taken into
// batches before the others: under a burst of turns, claims and user
// messages would otherwise queue behind every running turn's answer
// updates and event logs, and each new turn's first event with them.
// With a fence the write runs only if the fence holds (see commit).
func (a *appender) submit(ctx context.Context, op string, ahead bool, fence *store.Fence, run func(context.Context, *sql.Tx) error) error {
	r := &appendReq{ctx: ctx, op: op, fence: fence, run: run, err: make(chan error, 1)}
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
	for i, r := range batch {
		if errs[i] != nil {
			continue
		}
		if _, err := a.db.execTx(ctx, tx, qSavepointAppend); err != nil {
			fail(fmt.Errorf("store: append message: %w", err))
			return
		}
		var err error
		if r.fence != nil {
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
