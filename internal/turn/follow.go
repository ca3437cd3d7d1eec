package turn

import (
	"context"
	"fmt"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/store"
)

// Follow calls send with turn id's events after seq after, in order, as
// they are logged, until the turn's last event was sent (nil), the turn
// ended with nothing more to send (nil), send returns false (nil), ctx ends
// (its error) or the log cannot be read (the store's error). A turn is
// followed from memory on the replica that runs it, else from the store's
// log, woken by the store's notes and re-read every few seconds should a
// note be lost.
func (m *Manager) Follow(ctx context.Context, id string, after int64, send func(store.TurnEvent) bool) error {
	wake, unsubscribe := m.subscribe(id)
	defer unsubscribe()
	for {
		evs, ended, err := m.read(ctx, id, after)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if !send(ev) {
				return nil
			}
			after = ev.Seq
			if agent.IsEnd(ev.Data) {
				return nil
			}
		}
		if len(evs) == 0 && ended {
			return nil
		}
		if len(evs) >= readBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-time.After(pollInterval):
		}
	}
}

// read returns turn id's logged events after seq after (at most
// readBatch) and whether the turn has ended with none left.
func (m *Manager) read(ctx context.Context, id string, after int64) ([]store.TurnEvent, bool, error) {
	if lt := m.localTurn(id); lt != nil {
		evs, ended := lt.after(after)
		return evs, ended, nil
	}
	evs, err := m.cfg.Store.TurnEvents(ctx, id, after, readBatch)
	if err != nil {
		return nil, false, fmt.Errorf("turn: reading the turn's events: %w", err)
	}
	if len(evs) > 0 {
		return evs, false, nil
	}
	// Nothing new: has the turn ended (its last events may have been
	// logged just before)? A turn is marked ended only once its log is
	// closed, by its owner or by the replica that took it over when its
	// owner stopped.
	t, err := m.cfg.Store.GetTurn(ctx, id)
	if err != nil || t.State != store.TurnRunning {
		if evs, err = m.cfg.Store.TurnEvents(ctx, id, after, readBatch); err != nil || len(evs) == 0 {
			return nil, true, nil
		}
		return evs, false, nil
	}
	return nil, false, nil
}

// subscribe returns a channel that receives a value when turn id changes.
func (m *Manager) subscribe(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	m.mu.Lock()
	if m.wakers[id] == nil {
		m.wakers[id] = map[chan struct{}]struct{}{}
	}
	m.wakers[id][ch] = struct{}{}
	m.mu.Unlock()
	return ch, func() {
		m.mu.Lock()
		delete(m.wakers[id], ch)
		if len(m.wakers[id]) == 0 {
			delete(m.wakers, id)
		}
		m.mu.Unlock()
	}
}

// wake tells the followers of turn id (every follower when id is "").
func (m *Manager) wake(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id != "" {
		// One turn's followers, not a walk over every follower's turn:
		// each logged batch of every turn wakes its own.
		wakeAll(m.wakers[id])
		return
	}
	for _, set := range m.wakers {
		wakeAll(set)
	}
}

func wakeAll(set map[chan struct{}]struct{}) {
	for ch := range set {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// onNote handles a note from any replica.
func (m *Manager) onNote(n store.TurnNote) {
	switch n.Kind {
	case store.NoteStop:
		if lt := m.localTurn(n.TurnID); lt != nil {
			lt.cancel(errStopRequested)
		}
	case store.NoteResync:
		m.wake("")
	default:
		m.wake(n.TurnID)
	}
}
