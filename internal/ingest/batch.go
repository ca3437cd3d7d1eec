package ingest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/toolport/toolport/reccobeats"
)

// DefaultFeatureBatchDelay is how long the first track of a features batch
// waits for others before the batch asks for a call.
const DefaultFeatureBatchDelay = 75 * time.Millisecond

// featureBatcher gathers the ReccoBeats or Spotify ids that concurrent
// tracks resolved into /v1/audio-features calls of up to
// reccobeats.MaxIDs ids, and hands each track the whole answer (the track
// joins it on its own ids, so a row left out is that track's miss).
//
// A batch is asked for when it is full, when its first track has waited
// the delay, when every worker waits on a batch, or when no track of the
// build can still join (the end); it
// takes ids until the call actually leaves, that is until the upstream's
// gate grants a slot and a token: the more a busy or paced upstream makes
// it wait, the bigger the batch. A failed call (after the retry rule)
// fails only the tracks in it.
type featureBatcher struct {
	ctx    context.Context // the build's: a call serves many tracks
	gate   *gate
	client *reccobeats.Client
	delay  time.Duration

	mu sync.Mutex
	// open takes ids; nil when none does.
	open *featureBatch
	// unsubmitted counts the build's tracks that may still join a batch.
	unsubmitted int
	// waiting counts the tracks waiting on a batch's answer; when it
	// reaches workers, no other track can join.
	waiting, workers int
	calls            sync.WaitGroup
}

// featureBatch is one /v1/audio-features call and its answer.
type featureBatch struct {
	ids     []string
	started bool // its call has been asked for
	timer   *time.Timer
	done    chan struct{} // closed with rows, attempts and err set
	rows    []reccobeats.AudioFeatures
	calls   int
	err     error
}

// featureTicket is one track's place in the count of tracks that may still
// join a batch; it is given up once, by joining or by release.
type featureTicket struct{ used bool }

func newFeatureBatcher(ctx context.Context, g *gate, c *reccobeats.Client, delay time.Duration, tracks, workers int) *featureBatcher {
	if delay <= 0 {
		delay = DefaultFeatureBatchDelay
	}
	return &featureBatcher{ctx: ctx, gate: g, client: c, delay: delay, unsubmitted: tracks, workers: workers}
}

// release gives up t without joining: the track needs no features call.
func (fb *featureBatcher) release(t *featureTicket) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.useTicket(t)
}

func (fb *featureBatcher) useTicket(t *featureTicket) {
	if t.used {
		return
	}
	t.used = true
	fb.unsubmitted--
	if fb.unsubmitted <= 0 && fb.open != nil {
		fb.start(fb.open)
	}
}

// features waits for the rows of a batch holding ids (at most
// reccobeats.MaxIDs) and returns them with the attempts its call took.
func (fb *featureBatcher) features(ctx context.Context, t *featureTicket, ids []string) ([]reccobeats.AudioFeatures, int, error) {
	fb.mu.Lock()
	b := fb.open
	if b != nil && len(b.ids)+newIDs(b.ids, ids) > reccobeats.MaxIDs {
		fb.close(b)
		b = nil
	}
	if b == nil {
		b = &featureBatch{done: make(chan struct{})}
		fb.open = b
	}
	b.ids = union(b.ids, ids)
	switch {
	case len(b.ids) >= reccobeats.MaxIDs:
		fb.close(b)
	case b.timer == nil:
		b.timer = time.AfterFunc(fb.delay, func() {
			fb.mu.Lock()
			defer fb.mu.Unlock()
			fb.start(b)
		})
	}
	fb.useTicket(t)
	fb.waiting++
	if fb.waiting >= fb.workers {
		fb.start(b)
	}
	fb.mu.Unlock()
	defer func() {
		fb.mu.Lock()
		fb.waiting--
		fb.mu.Unlock()
	}()

	select {
	case <-b.done:
		return b.rows, b.calls, b.err
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
}

// close stops b taking ids and asks for its call. fb.mu is held.
func (fb *featureBatcher) close(b *featureBatch) {
	if fb.open == b {
		fb.open = nil
	}
	fb.start(b)
}

// start asks for b's call, once. fb.mu is held.
func (fb *featureBatcher) start(b *featureBatch) {
	if b.started {
		return
	}
	b.started = true
	if b.timer != nil {
		b.timer.Stop()
	}
	fb.calls.Go(func() {
		var ids []string
		calls, err := fb.gate.do(fb.ctx, func(ctx context.Context) error {
			if ids == nil { // the first attempt seals the batch; retries send the same ids
				fb.mu.Lock()
				if fb.open == b {
					fb.open = nil
				}
				ids = slices.Clone(b.ids)
				fb.mu.Unlock()
			}
			rows, err := fb.client.AudioFeatures(ctx, ids)
			b.rows = rows
			return err
		})
		b.calls, b.err = calls, err
		close(b.done)
	})
}

// wait returns when every call asked for has ended.
func (fb *featureBatcher) wait() { fb.calls.Wait() }

// newIDs counts the ids of add not in ids (add has no repeats).
func newIDs(ids, add []string) int {
	n := 0
	for _, id := range add {
		if !slices.Contains(ids, id) {
			n++
		}
	}
	return n
}

// union appends the ids of add not in ids.
func union(ids, add []string) []string {
	for _, id := range add {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
