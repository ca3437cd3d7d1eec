package turn

import (
	"context"
	"encoding/json"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/store"
)

// renew renews the leases of this replica's turns, and cancels those it
// lost or that were asked to stop (should the note have been missed). The
// clock calls it every Lease/3.
func (m *Manager) renew() {
	lease := m.cfg.Lease
	if m.bg.Err() != nil || m.dead.Load() {
		return
	}
	ids := m.localIDs()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(m.bg, lease/3)
	start := m.cfg.Clock.Now()
	until := start.Add(lease)
	kept, err := m.cfg.Store.RenewTurns(ctx, m.cfg.Replica, ids, until)
	cancel()
	if err != nil {
		m.logger.Warn("renewing turn leases", "error", err)
		// A turn whose lease would lapse before the next try is given
		// up now: once it lapses another replica closes it, and this one
		// must not go on writing to a conversation it no longer holds.
		// The next try comes a period after this one started (at once
		// when this one took that long, as a renewal that ran out of time
		// under load does), not a period after it failed: counted from
		// the failure, one slow renewal gave up every turn.
		next := max(start.Add(lease/3).UnixNano(), m.cfg.Clock.Now().UnixNano())
		for _, id := range ids {
			if lt := m.localTurn(id); lt != nil && next >= lt.leaseUntil.Load() {
				m.logger.Warn("giving up a turn whose lease could not be renewed", "turn", id)
				lt.cancel(errLeaseLost)
			}
		}
		return
	}
	for _, id := range ids {
		lt := m.localTurn(id)
		if lt == nil {
			continue
		}
		stop, ok := kept[id]
		switch {
		case !ok:
			lt.cancel(errLeaseLost)
		case stop:
			lt.cancel(errStopRequested)
		default:
			lt.leaseUntil.Store(until.UnixNano())
		}
	}
}

// sweep repairs turns whose replica stopped renewing them and deletes the
// logs of turns that ended more than EventsRetention ago. The clock calls
// it every Lease/2.
func (m *Manager) sweep() {
	if m.dead.Load() || m.bg.Err() != nil {
		return
	}
	m.Repair(m.bg, "")
	ctx, cancel := context.WithTimeout(m.bg, storeOpTimeout)
	defer cancel()
	// ended_at is the store's clock; the cutoff is the lease clock's.
	if _, err := m.cfg.Store.DeleteEndedTurns(ctx, m.cfg.Clock.Now().Add(-m.cfg.EventsRetention)); err != nil {
		m.logger.Warn("deleting ended turns", "error", err)
	}
}

// Repair takes over the turns whose lease lapsed (of conversation conv,
// when not ""), closes them and ends them. Closing a lost turn appends an
// error and message_end to its log, so that its followers end, and has
// [Answers] mark its answer incomplete, keeping what the log holds of it.
// The conversation stays claimed while a lost turn is closed, so a new
// turn's question cannot land before its answer. The sweeper calls it
// every Lease/2; a turn started or followed in a conversation calls it for
// that conversation. Failures are logged: the next sweep tries again.
//
// The turns this replica runs are never taken: under load a renewal can
// come after its lease lapsed (a statement queued behind the turns'
// writes, the renewing goroutine waiting for a CPU), and the sweeper,
// running meanwhile, took the replica's own live turns over, fencing them:
// their answers could not be saved and their streams were cut, although no
// other replica had them. Another replica may still take them (fencing
// keeps that safe); this one keeps renewing them, or gives them up when
// renewals fail (renew).
func (m *Manager) Repair(ctx context.Context, conv string) {
	ctx, cancel := context.WithTimeout(ctx, storeOpTimeout)
	defer cancel()
	now := m.cfg.Clock.Now()
	lapsed, err := m.cfg.Store.TakeOverTurns(ctx, now, conv, m.cfg.Replica, now.Add(m.cfg.Lease), m.localIDs())
	if err != nil {
		m.logger.Warn("taking over lapsed turns", "error", err)
		return
	}
	for _, t := range lapsed {
		// Fenced too: should this replica stall while closing and the turn
		// be taken over again, its closing writes are refused.
		f := store.Fence{TurnID: t.ID, Generation: t.Generation}
		m.closeLost(ctx, f, t)
		if _, err := m.cfg.Store.Fenced(f).EndTurn(ctx, t.ID, m.cfg.Replica, store.TurnIncomplete); err != nil {
			m.logger.Warn("ending a lost turn", "turn", t.ID, "error", err)
		}
	}
}

// closeLost finishes the log of a turn whose replica stopped before the
// turn ended and has its answer marked incomplete.
func (m *Manager) closeLost(ctx context.Context, f store.Fence, t store.Turn) {
	var last int64
	var logged []json.RawMessage
	for {
		evs, err := m.cfg.Store.TurnEvents(ctx, t.ID, last, readBatch)
		if err != nil {
			m.logger.Warn("closing a lost turn", "turn", t.ID, "error", err)
			return
		}
		for _, ev := range evs {
			last = ev.Seq
			logged = append(logged, ev.Data)
		}
		if len(evs) < readBatch {
			break
		}
	}
	closing, err := m.cfg.Answers.CloseLost(ctx, f, t.ConversationID, logged)
	if err != nil {
		m.logger.Warn("closing a lost turn's answer", "turn", t.ID, "error", err)
	}
	if len(closing) == 0 {
		return // it did end; only its row was not updated
	}
	evs := make([]store.TurnEvent, 0, len(closing))
	for _, ev := range closing {
		data, err := agent.Encode(ev)
		if err != nil {
			m.logger.Warn("closing a lost turn", "turn", t.ID, "error", err)
			return
		}
		last++
		evs = append(evs, store.TurnEvent{Seq: last, Data: data})
	}
	if err := m.cfg.Store.Fenced(f).AppendTurnEvents(ctx, t.ID, evs); err != nil {
		m.logger.Warn("closing a lost turn", "turn", t.ID, "error", err)
	}
}

// localIDs returns the ids of the turns this replica runs.
func (m *Manager) localIDs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.local))
	for id := range m.local {
		ids = append(ids, id)
	}
	return ids
}
