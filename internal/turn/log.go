package turn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/store"
)

// localTurn is a turn running on this replica: its events, in memory while
// it runs, for this replica's followers.
type localTurn struct {
	id, conv string
	cancel   context.CancelCauseFunc
	// fence is the claim the turn's writes are made under: refused once
	// another replica took the turn over.
	fence store.Fence
	// leaseUntil is when the turn's lease ends as this replica last set it
	// (Unix nanoseconds): the claim, then each renewal that succeeded.
	leaseUntil atomic.Int64

	mu      sync.Mutex
	events  []store.TurnEvent
	logged  int  // events[:logged] are in the store's log (or failed to be)
	ended   bool // the turn emitted its last event
	more    chan struct{}
	flushed chan struct{} // closed once every event is logged after the end
	// started counts the turn as started in the manager's gate; called
	// once its first event is logged (or it ends without one).
	started func()
}

// after returns the logged events after seq and whether the turn has ended
// and all of them are logged. Only logged events go to followers, so that a
// client resuming elsewhere finds in the log everything it has seen.
func (lt *localTurn) after(seq int64) ([]store.TurnEvent, bool) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	done := lt.ended && lt.logged == len(lt.events)
	if seq < 0 {
		seq = 0
	}
	if seq >= int64(lt.logged) {
		return nil, done
	}
	return lt.events[seq:lt.logged], done
}

// record adds one event to a local turn; logEvents writes it to the store,
// then hands it to the followers.
func (lt *localTurn) record(ev agent.Event) {
	data, err := agent.Encode(ev)
	if err != nil {
		// Cannot happen for the agent's event types; never break the frame.
		data = []byte(`{"type":"error","code":"INTERNAL","message":"an event could not be encoded","retryable":false}`)
	}
	lt.mu.Lock()
	lt.events = append(lt.events, store.TurnEvent{Seq: int64(len(lt.events)) + 1, Data: data})
	lt.mu.Unlock()
	lt.signal()
}

func (lt *localTurn) signal() {
	select {
	case lt.more <- struct{}{}:
	default:
	}
}

// logEvents writes a local turn's events to the store as they come: all
// that gathered while the previous write ran go in the next one, so a busy
// store gets fewer, larger writes instead of a queue of one-row inserts.
func (m *Manager) logEvents(lt *localTurn) {
	defer close(lt.flushed)
	for {
		lt.mu.Lock()
		batch := lt.events[lt.logged:]
		done := lt.ended
		lt.mu.Unlock()
		if len(batch) == 0 {
			if done {
				return
			}
			<-lt.more
			continue
		}
		if !m.dead.Load() {
			ctx, cancel := storeCtx()
			err := m.cfg.Store.Fenced(lt.fence).AppendTurnEvents(ctx, lt.id, batch)
			switch {
			case errors.Is(err, store.ErrFenced):
				// Taken over while this replica stalled: the taker closed
				// the turn; stop without writing more.
				lt.cancel(errLeaseLost)
			case err != nil:
				m.logger.Warn("logging turn events", "turn", lt.id, "from", batch[0].Seq, "count", len(batch), "error", err)
			}
			cancel()
		}
		lt.mu.Lock()
		lt.logged += len(batch)
		lt.mu.Unlock()
		lt.started()
		m.wake(lt.id)
	}
}

func (m *Manager) localTurn(id string) *localTurn {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.local[id]
}
