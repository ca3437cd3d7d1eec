package sqlstore

import (
	"context"
	"fmt"
	"sync"
)

// batcher gathers concurrent calls of one kind and writes them together:
// while a worker writes a batch, the calls that arrive meanwhile queue, and
// the worker's next batch takes all that fit. Under a burst of chat turns on
// PostgreSQL each call was a statement, a round trip and a commit of its
// own; a batch is one statement for all of them.
//
// A call that does not fit the batch being gathered (fits says so) is held
// for the worker's next batch, so that calls the rules keep apart (two of
// one turn, say) are written in arrival order. Each request carries its own
// way to be answered; write must answer every request it is given.
type batcher[R any] struct {
	reqs chan R
	quit chan struct{}
	done chan struct{}
	once sync.Once

	fits  func(batch []R, r R) bool
	write func(batch []R)
}

// newBatcher starts workers loops that each write a batch at a time.
func newBatcher[R any](workers int, fits func(batch []R, r R) bool, write func(batch []R)) *batcher[R] {
	b := &batcher[R]{reqs: make(chan R), quit: make(chan struct{}), done: make(chan struct{}),
		fits: fits, write: write}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(b.loop)
	}
	go func() { wg.Wait(); close(b.done) }()
	return b
}

// send hands r to a worker. It returns ctx's error if ctx ends first and
// errClosed if the batcher is closed; then r will not be answered.
func (b *batcher[R]) send(ctx context.Context, r R) error {
	select {
	case b.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-b.quit:
		return errClosed
	}
}

// close stops the workers after the batches in progress (a held call is
// written first).
func (b *batcher[R]) close() {
	b.once.Do(func() { close(b.quit) })
	<-b.done
}

func (b *batcher[R]) loop() {
	var held R
	holding := false
	for {
		var first R
		if holding {
			first, holding = held, false
		} else {
			select {
			case first = <-b.reqs:
			case <-b.quit:
				return
			}
		}
		batch := []R{first}
	gather:
		for {
			select {
			case r := <-b.reqs:
				if !b.fits(batch, r) {
					held, holding = r, true
					break gather
				}
				batch = append(batch, r)
			default:
				break gather
			}
		}
		b.write(batch)
	}
}

// call is what a write waiting in a batcher carries: its caller's context
// (a caller gone by the time its batch is written is skipped) and the
// channel its answer goes to. The requests of the write groups embed it.
type call struct {
	ctx context.Context
	err chan error
}

func newCall(ctx context.Context) call { return call{ctx: ctx, err: make(chan error, 1)} }

func (c *call) pending() *call { return c }

// caller is a request that embeds a call.
type caller interface{ pending() *call }

// submit hands r to one of b's workers and waits for its answer; op names
// the write in errors.
func submit[R caller](ctx context.Context, b *batcher[R], op string, r R) error {
	if err := b.send(ctx, r); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return <-r.pending().err // the batcher answers every request it took
}

// writeEach answers every call of batch. A call whose caller has gone away
// gets its context's error (as op's). The others are written together by
// one run, which returns each one's outcome; when that run fails whole (a
// constraint refuses one row, say), each call is written again by a run of
// its own, so that the error is only its caller's.
func writeEach[R caller](batch []R, op string, run func([]R) ([]error, error)) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.pending().ctx.Err(); err != nil {
			r.pending().err <- fmt.Errorf("store: %s: %w", op, err)
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	errs, err := run(live)
	if err != nil && len(live) > 1 {
		for _, r := range live {
			errs, err := run([]R{r})
			if err == nil {
				err = errs[0]
			}
			r.pending().err <- err
		}
		return
	}
	for i, r := range live {
		if err != nil {
			r.pending().err <- err
		} else {
			r.pending().err <- errs[i]
		}
	}
}
