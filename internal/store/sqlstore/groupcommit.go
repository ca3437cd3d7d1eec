package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/toolport/toolport/internal/store"
)

// maxAppendBatch bounds how many appends share one transaction.
const maxAppendBatch = 64

// The savepoint that keeps one write's failure from failing its batch, when
// a batch runs again after a write failed.
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
// running are gathered and committed in one transaction; one failing (an
// unknown conversation, a duplicate id) does not fail the others (see
// commit). A call still returns only after its write is durable. A write
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
	call
	op    string       // names the write in errors: "append message"
	fence *store.Fence // checked before run, in the batch's transaction
	run   func(ctx context.Context, tx *sql.Tx) error
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

// do queues m (under fence, when not nil) and waits until it is committed or has failed. A user's
// message goes ahead of other writes: a turn's first event waits for it.
func (a *appender) do(ctx context.Context, m store.Message, fence *store.Fence) error {
	return a.submit(ctx, "append message", m.Role == store.RoleUser, fence, func(ctx context.Context, tx *sql.Tx) error {
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
	r := &appendReq{call: newCall(ctx), op: op, fence: fence, run: run}
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
//
// Most batches succeed whole, so a batch runs first without a savepoint per
// write: each SAVEPOINT (like the statement savepoint of any statement that
// writes two tables) makes FTS5 flush the messages' pending search terms
// to an index segment of their own, and per write the savepoints and their
// flushes were half of a message append's cost (BenchmarkBurstTurns). When
// a write fails, the batch is rolled back and run again with each write in
// a savepoint, so that the failure is that write's alone. A write refused
// by its fence has changed nothing and needs no second run.
func (a *appender) commit(batch []*appendReq) {
	skip := make([]error, len(batch))
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			skip[i] = fmt.Errorf("store: %s: %w", r.op, err)
		}
	}
	errs := slices.Clone(skip)
	err := a.run(batch, errs, false)
	if errors.Is(err, errWriteFailed) {
		errs = skip // the fences are checked again
		err = a.run(batch, errs, true)
	}
	if err == nil {
		// Counted before the answers, so that a caller that was answered
		// sees its commit counted.
		a.commits.Add(1)
	}
	for i, r := range batch {
		if errs[i] == nil {
			errs[i] = err
		}
		r.err <- errs[i]
	}
}

// errWriteFailed is run's answer when a write failed in a batch run without
// savepoints: the batch was rolled back.
var errWriteFailed = errors.New("a write of the batch failed")

// run runs the writes of batch whose errs are nil in one transaction and
// commits it, each write in a savepoint if isolate is set. It sets errs[i]
// for each write that failed, and returns the error that failed the batch
// whole: then no write was committed. Without isolate, a write failing
// other than by its fence fails the batch with errWriteFailed.
func (a *appender) run(batch []*appendReq, errs []error, isolate bool) error {
	ctx := context.Background()
	tx, err := a.db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: append message: %w", err)
	}
	defer rollback(tx)
	for i, r := range batch {
		if errs[i] != nil {
			continue
		}
		if isolate {
			if _, err := a.db.execTx(ctx, tx, qSavepointAppend); err != nil {
				return fmt.Errorf("store: append message: %w", err)
			}
		}
		var err error
		if r.fence != nil {
			err = a.db.checkFence(ctx, tx, *r.fence)
		}
		fenced := err != nil && errors.As(err, new(*store.FencedError)) // refused before it wrote
		if err == nil {
			err = r.run(ctx, tx)
		}
		if err != nil {
			if !isolate && !fenced {
				return errWriteFailed
			}
			errs[i] = err
			if isolate {
				if _, err := a.db.execTx(ctx, tx, qRollbackAppend); err != nil {
					return fmt.Errorf("store: append message: %w", err)
				}
			}
		}
		if isolate {
			if _, err := a.db.execTx(ctx, tx, qReleaseAppend); err != nil {
				return fmt.Errorf("store: append message: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: append message: %w", err)
	}
	return nil
}
