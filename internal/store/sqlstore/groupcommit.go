package sqlstore

import (
	"context"
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

// errClosed is returned by writes queued when the store closes.
var errClosed = errors.New("store: closed")

// appender commits concurrent AppendMessage calls together.
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
type appender struct {
	db      *DB
	commits atomic.Int64 // transactions committed, for tests
	reqs    chan *appendReq
	quit    chan struct{}
	done    chan struct{}
	once    sync.Once
}

type appendReq struct {
	ctx context.Context
	m   store.Message
	err chan error
}

// newAppender starts workers loops that each commit a batch at a time. SQLite
// needs one (it has one writer); on PostgreSQL a few run side by side, so that
// a batch's statements (several round trips per message) do not hold up
// appends that a parallel transaction could commit meanwhile.
func newAppender(db *DB, workers int) *appender {
	a := &appender{db: db, reqs: make(chan *appendReq), quit: make(chan struct{}), done: make(chan struct{})}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(a.loop)
	}
	go func() { wg.Wait(); close(a.done) }()
	return a
}

// do queues m and waits until it is committed or has failed.
func (a *appender) do(ctx context.Context, m store.Message) error {
	r := &appendReq{ctx: ctx, m: m, err: make(chan error, 1)}
	select {
	case a.reqs <- r:
	case <-ctx.Done():
		return fmt.Errorf("store: append message: %w", ctx.Err())
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
		case first = <-a.reqs:
		case <-a.quit:
			return
		}
		batch := []*appendReq{first}
	gather:
		for len(batch) < maxAppendBatch {
			select {
			case r := <-a.reqs:
				batch = append(batch, r)
			default:
				break gather
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
		return strings.Compare(batch[x].m.ConversationID, batch[y].m.ConversationID)
	})
	ctx := context.Background()
	tx, err := a.db.w.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("store: append message: %w", err))
		return
	}
	defer rollback(tx)
	for _, i := range order {
		r := batch[i]
		if err := r.ctx.Err(); err != nil {
			errs[i] = fmt.Errorf("store: append message: %w", err)
			continue
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT append_one`); err != nil {
			fail(fmt.Errorf("store: append message: %w", err))
			return
		}
		if err := a.db.appendInTx(ctx, tx, r.m); err != nil {
			errs[i] = err
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO append_one`); err != nil {
				fail(fmt.Errorf("store: append message: %w", err))
				return
			}
		}
		if _, err := tx.ExecContext(ctx, `RELEASE append_one`); err != nil {
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
