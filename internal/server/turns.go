package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
)

// Chat turns across replicas.
//
// A turn runs in a goroutine of the replica that accepted it, detached from
// the request that started it: bounded by the agent's turn timeout and the
// server's shutdown, stopped by POST /api/conversations/{id}/stop on any
// replica. Its claim on the conversation is a lease in the store that this
// replica renews every TurnLease/3; a replica that dies stops renewing, and
// once the lease lapses any replica's sweeper (or the next turn started in the
// conversation) marks the turn incomplete and closes its event log.
//
// Every event is appended to the turn's log in the store (seq 1, 2, …)
// before anyone sees it (those that gather during a write go in the next
// one), then handed to this replica's streams from memory;
// other replicas learn of it from the store's notes (LISTEN/NOTIFY on
// PostgreSQL) and read the log. A stream's SSE ids are "<turn id>:<seq>", so a
// client that lost its stream resumes on any replica with Last-Event-ID.

// Defaults of the turn settings of [Config].
const (
	DefaultTurnLease           = 15 * time.Second
	DefaultTurnEventsRetention = 10 * time.Minute
	DefaultStartPrecedence     = 200 * time.Millisecond
	// turnPoll is how often a stream following another replica's turn
	// re-reads the log when no note came (notes can be lost while the
	// listening connection reconnects).
	turnPoll = 2 * time.Second
	// turnReadBatch bounds the events read from the store at once.
	turnReadBatch = 500
	// storeOpTimeout bounds a store call made on behalf of a turn.
	storeOpTimeout = 5 * time.Second
)

// Error code of the error event closing a turn whose replica stopped.
const codeTurnLost = "TURN_LOST"

var (
	errStopRequested = errors.New("the turn was stopped")
	errLeaseLost     = errors.New("the turn's lease was lost")
	errShuttingDown  = errors.New("the server is shutting down")
)

// localTurn is a turn running on this replica: its events, in memory while
// it runs, for this replica's streams.
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
	// started counts the turn as started in the server's startGate; called
	// once its first event is logged (or it ends without one).
	started func()
}

// after returns the logged events after seq and whether the turn has ended
// and all of them are logged. Only logged events go to clients, so that a
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

// logEvents writes a local turn's events to the store as they come: all
// that gathered while the previous write ran go in the next one, so a busy
// store gets fewer, larger writes instead of a queue of one-row inserts.
func (s *Server) logEvents(lt *localTurn) {
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
		if !s.turns.dead.Load() {
			ctx, cancel := s.storeCtx()
			err := s.cfg.Store.AppendTurnEvents(store.WithFence(ctx, lt.fence), lt.id, batch)
			switch {
			case errors.Is(err, store.ErrFenced):
				// Taken over while this replica stalled: the taker closed
				// the turn; stop without writing more.
				lt.cancel(errLeaseLost)
			case err != nil:
				s.logger.Warn("logging turn events", "turn", lt.id, "from", batch[0].Seq, "count", len(batch), "error", err)
			}
			cancel()
		}
		lt.mu.Lock()
		lt.logged += len(batch)
		lt.mu.Unlock()
		lt.started()
		s.wake(lt.id)
	}
}

// turns is the server's side of cross-replica turns.
type turns struct {
	replica string
	dead    atomic.Bool // set by a simulated crash (tests): no more writes

	bg       context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup

	base       context.Context // parent of every turn's context
	cancelBase context.CancelCauseFunc
	wg         sync.WaitGroup // running turn goroutines

	mu     sync.Mutex
	local  map[string]*localTurn
	wakers map[string]map[chan struct{}]struct{}
}

func (s *Server) initTurns() {
	t := &s.turns
	t.replica = s.cfg.ReplicaID
	if t.replica == "" {
		t.replica = uuid.NewString()
	}
	t.local = map[string]*localTurn{}
	t.wakers = map[string]map[chan struct{}]struct{}{}
	t.bg, t.bgCancel = context.WithCancel(context.Background())
	t.base, t.cancelBase = context.WithCancelCause(context.Background())
	t.bgWG.Go(s.heartbeat)
	t.bgWG.Go(s.sweep)
	t.bgWG.Go(func() {
		if err := s.cfg.Store.WatchTurns(t.bg, s.onNote); err != nil {
			s.logger.Error("watching turns", "error", err)
		}
	})
}

// Close stops the server's background work and cancels its running turns
// (each saves what it has, marked incomplete), waiting for them up to the
// agent's save timeout. [Server.Serve] calls it; a server used only through
// [Server.Handler] should be closed by its owner.
func (s *Server) Close() {
	s.cancelTurns(errShuttingDown)
	s.turns.bgCancel()
	s.turns.bgWG.Wait()
}

// cancelTurns cancels every running turn and waits (bounded) for them to end.
func (s *Server) cancelTurns(cause error) {
	s.turns.cancelBase(cause)
	waitUntil(&s.turns.wg, time.After(agent.DefaultSaveTimeout))
}

// waitUntil waits for wg or until stop fires; it reports whether wg finished.
func waitUntil(wg *sync.WaitGroup, stop <-chan time.Time) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-stop:
		return false
	}
}

func (s *Server) lease() time.Duration { return s.cfg.TurnLease }

// storeCtx is a context for a store call made for a turn: not canceled with
// the turn (its last events and end must be written), but bounded.
func (s *Server) storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeOpTimeout)
}

// subscribe returns a channel that receives a value when turn id changes.
func (s *Server) subscribe(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	t := &s.turns
	t.mu.Lock()
	if t.wakers[id] == nil {
		t.wakers[id] = map[chan struct{}]struct{}{}
	}
	t.wakers[id][ch] = struct{}{}
	t.mu.Unlock()
	return ch, func() {
		t.mu.Lock()
		delete(t.wakers[id], ch)
		if len(t.wakers[id]) == 0 {
			delete(t.wakers, id)
		}
		t.mu.Unlock()
	}
}

// wake tells the streams following turn id (every stream when id is "").
func (s *Server) wake(id string) {
	t := &s.turns
	t.mu.Lock()
	defer t.mu.Unlock()
	if id != "" {
		// One turn's streams, not a walk over every open stream's turn:
		// each logged batch of every turn wakes its own.
		wakeAll(t.wakers[id])
		return
	}
	for _, set := range t.wakers {
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

func (s *Server) localTurn(id string) *localTurn {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return s.turns.local[id]
}

// onNote handles a note from any replica.
func (s *Server) onNote(n store.TurnNote) {
	switch n.Kind {
	case store.NoteStop:
		if lt := s.localTurn(n.TurnID); lt != nil {
			lt.cancel(errStopRequested)
		}
	case store.NoteResync:
		s.wake("")
	default:
		s.wake(n.TurnID)
	}
}

// heartbeat renews the leases of this replica's turns, and cancels those it
// lost or that were asked to stop (should the note have been missed).
func (s *Server) heartbeat() {
	tick := time.NewTicker(s.lease() / 3)
	defer tick.Stop()
	for {
		select {
		case <-s.turns.bg.Done():
			return
		case <-tick.C:
		}
		s.turns.mu.Lock()
		ids := make([]string, 0, len(s.turns.local))
		for id := range s.turns.local {
			ids = append(ids, id)
		}
		s.turns.mu.Unlock()
		if len(ids) == 0 || s.turns.dead.Load() {
			continue
		}
		ctx, cancel := context.WithTimeout(s.turns.bg, s.lease()/3)
		until := time.Now().Add(s.lease())
		kept, err := s.cfg.Store.RenewTurns(ctx, s.turns.replica, ids, until)
		cancel()
		if err != nil {
			s.logger.Warn("renewing turn leases", "error", err)
			// A turn whose lease would lapse before the next try is given
			// up now: once it lapses another replica closes it, and this one
			// must not go on writing to a conversation it no longer holds.
			next := time.Now().Add(s.lease() / 3)
			for _, id := range ids {
				if lt := s.localTurn(id); lt != nil && !next.Before(time.Unix(0, lt.leaseUntil.Load())) {
					s.logger.Warn("giving up a turn whose lease could not be renewed", "turn", id)
					lt.cancel(errLeaseLost)
				}
			}
			continue
		}
		for _, id := range ids {
			lt := s.localTurn(id)
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
}

// sweep ends turns whose replica stopped renewing them and deletes the
// logs of turns that ended more than TurnEventsRetention ago.
func (s *Server) sweep() {
	tick := time.NewTicker(s.lease() / 2)
	defer tick.Stop()
	for {
		select {
		case <-s.turns.bg.Done():
			return
		case <-tick.C:
		}
		if s.turns.dead.Load() {
			continue
		}
		s.expire(s.turns.bg, "")
		ctx, cancel := context.WithTimeout(s.turns.bg, storeOpTimeout)
		if _, err := s.cfg.Store.DeleteEndedTurns(ctx, time.Now().Add(-s.cfg.TurnEventsRetention)); err != nil {
			s.logger.Warn("deleting ended turns", "error", err)
		}
		cancel()
	}
}

// expire takes over the lapsed turns (of conv, when not ""), closes them
// and ends them. The conversation stays claimed while a lost turn is
// closed, so a new turn's question cannot land before its answer.
func (s *Server) expire(ctx context.Context, conv string) {
	ctx, cancel := context.WithTimeout(ctx, storeOpTimeout)
	defer cancel()
	lapsed, err := s.cfg.Store.TakeOverTurns(ctx, time.Now(), conv, s.turns.replica, time.Now().Add(s.lease()))
	if err != nil {
		s.logger.Warn("taking over lapsed turns", "error", err)
		return
	}
	for _, t := range lapsed {
		// Fenced too: should this replica stall while closing and the turn
		// be taken over again, its closing writes are refused.
		ctx := store.WithFence(ctx, store.Fence{TurnID: t.ID, Generation: t.Generation})
		s.closeLostTurn(ctx, t)
		if _, err := s.cfg.Store.EndTurn(ctx, t.ID, s.turns.replica, store.TurnIncomplete); err != nil {
			s.logger.Warn("ending a lost turn", "turn", t.ID, "error", err)
		}
	}
}

// closeLostTurn finishes the log of a turn whose replica stopped before the
// turn ended (an error event and message_end, so that streams following it
// end) and marks its answer incomplete with that error, keeping what the log
// holds of it.
func (s *Server) closeLostTurn(ctx context.Context, t store.Turn) {
	var last int64
	var msgID string
	var answer []agent.Event
	for {
		evs, err := s.cfg.Store.TurnEvents(ctx, t.ID, last, turnReadBatch)
		if err != nil {
			s.logger.Warn("closing a lost turn", "turn", t.ID, "error", err)
			return
		}
		for _, ev := range evs {
			last = ev.Seq
			dec, err := agent.Decode(ev.Data)
			if err != nil {
				s.logger.Warn("reading a lost turn's log", "turn", t.ID, "seq", ev.Seq, "error", err)
				continue
			}
			switch dec := dec.(type) {
			case agent.MessageStart:
				msgID = dec.MessageID
			case agent.MessageEnd:
				return // it did end; only its row was not updated
			default:
				answer = append(answer, dec)
			}
		}
		if len(evs) < turnReadBatch {
			break
		}
	}
	lost := agent.ErrorEvent{Code: codeTurnLost, Retryable: true,
		Message: "the server writing this answer stopped before it finished; what it wrote so far is kept"}
	if msgID != "" {
		s.markLost(ctx, t.ConversationID, msgID, agent.PartialAnswer(answer), lost)
	}
	var evs []store.TurnEvent
	for _, ev := range []agent.Event{lost, agent.MessageEnd{MessageID: msgID, StopReason: agent.StopError}} {
		data, _ := agent.Encode(ev)
		last++
		evs = append(evs, store.TurnEvent{Seq: last, Data: data})
	}
	if err := s.cfg.Store.AppendTurnEvents(ctx, t.ID, evs); err != nil {
		s.logger.Warn("closing a lost turn", "turn", t.ID, "error", err)
	}
}

// markLost marks a lost turn's answer incomplete with its error. Its content
// becomes logged (the answer rebuilt from the turn's log) when that holds
// more than the answer saved (the agent saves only after each tool round, so
// text streamed since is only in the log); the saved content stays when it
// holds more (events the dead replica failed to log, or logged after its
// last save).
func (s *Server) markLost(ctx context.Context, conv, msgID string, logged []llm.Block, ev agent.ErrorEvent) {
	merr := &store.MessageError{Code: ev.Code, Message: ev.Message}
	c, err := s.cfg.Store.GetConversation(ctx, conv)
	if err != nil {
		s.logger.Warn("marking a lost turn's answer", "error", err)
		return
	}
	content := json.RawMessage(`[]`) // content is an array, even when empty
	if len(logged) > 0 {
		enc, err := llm.MarshalBlocks(logged)
		if err != nil {
			s.logger.Warn("encoding a lost turn's answer", "error", err)
			logged = nil
		} else {
			content = enc
		}
	}
	for _, m := range c.Messages {
		if m.ID == msgID {
			var saved []llm.Block
			if json.Unmarshal(m.Content, &saved) == nil && covers(logged, saved) {
				m.Content = content
			}
			m.Incomplete = true
			if m.Error == nil {
				m.Error = merr
			}
			if err := s.cfg.Store.UpdateMessage(ctx, m); err != nil {
				s.logger.Warn("marking a lost turn's answer", "error", err)
			}
			return
		}
	}
	if _, err := s.cfg.Store.AppendMessage(ctx, store.Message{ID: msgID, ConversationID: conv, Role: store.RoleAssistant,
		Content: content, Incomplete: true, Error: merr}); err != nil {
		s.logger.Warn("marking a lost turn's answer", "error", err)
	}
}

// covers reports whether the answer rebuilt from a turn's log holds more
// than the saved one: both grow from the same start, so more tool results
// and text, and not less of either, means the log went further.
func covers(logged, saved []llm.Block) bool {
	size := func(bs []llm.Block) (results, text int) {
		for _, b := range bs {
			switch b.Type {
			case llm.BlockToolResult:
				results++
			case llm.BlockText:
				text += len(b.Text)
			}
		}
		return results, text
	}
	lr, lt := size(logged)
	sr, st := size(saved)
	return lr >= sr && lt >= st && (lr > sr || lt > st)
}

// startTurn claims the conversation and starts the turn; the channel gets
// nil once the turn's first event is logged, or the error that kept it from
// starting.
func (s *Server) startTurn(ctx context.Context, conv string, run turnFunc) (*localTurn, <-chan error, error) {
	// Counted as starting from here, its claim included (under a burst on
	// PostgreSQL the claims themselves queue), to its first event; not
	// while it waits for a busy conversation's turn to end, which can take
	// seconds.
	counted := s.gate.enter()
	id := uuid.NewString()
	claim := store.Turn{ID: id, ConversationID: conv, Owner: s.turns.replica}
	claim.LeaseUntil = time.Now().Add(s.lease())
	claimed, err := s.cfg.Store.StartTurn(ctx, claim)
	if errors.Is(err, store.ErrBusy) {
		// The turn in the way may be one whose replica died: end it if its
		// lease lapsed, and try once more.
		s.expire(ctx, conv)
		claim.LeaseUntil = time.Now().Add(s.lease())
		claimed, err = s.cfg.Store.StartTurn(ctx, claim)
	}
	if errors.Is(err, store.ErrBusy) {
		counted()
		ended := s.awaitEnding(ctx, conv)
		counted = s.gate.enter()
		if ended {
			claim.LeaseUntil = time.Now().Add(s.lease())
			claimed, err = s.cfg.Store.StartTurn(ctx, claim)
		}
	}
	if err != nil {
		counted()
		return nil, nil, err
	}
	fence := store.Fence{TurnID: id, Generation: claimed.Generation}
	// The agent's writes (its answer) are made under the fence too.
	tctx, cancel := context.WithCancelCause(store.WithFence(s.turns.base, fence))
	lt := &localTurn{id: id, conv: conv, cancel: cancel, fence: fence, more: make(chan struct{}, 1), flushed: make(chan struct{}), started: counted}
	lt.leaseUntil.Store(claim.LeaseUntil.UnixNano())
	s.turns.mu.Lock()
	s.turns.local[id] = lt
	s.turns.mu.Unlock()
	started := make(chan error, 1)
	s.turns.wg.Add(1)
	go s.logEvents(lt)
	go s.runTurn(tctx, lt, run, started)
	return lt, started, nil
}

func (s *Server) runTurn(ctx context.Context, lt *localTurn, run turnFunc, started chan<- error) {
	defer s.turns.wg.Done()
	var once sync.Once
	stop := ""
	first := true
	emit := func(ev agent.Event) {
		if end, ok := ev.(agent.MessageEnd); ok {
			stop = end.StopReason
		}
		if !first {
			s.gate.wait(ctx)
		}
		s.record(lt, ev)
		once.Do(func() { started <- nil })
		if first {
			// The turn's work (the model call, tools) waits too, not only
			// its events: its CPU would otherwise go to the model request
			// and the stream's decoding while other messages still wait
			// for their first event.
			first = false
			s.gate.wait(ctx)
		}
	}
	err := run(ctx, emit)
	lt.started() // a turn that failed before its first event
	// The log is complete before the turn is marked ended, so that a
	// stream elsewhere that sees it ended has read everything.
	lt.mu.Lock()
	lt.ended = true
	lt.mu.Unlock()
	lt.signal()
	<-lt.flushed
	once.Do(func() { started <- err })
	state := store.TurnDone
	if err != nil || stop == agent.StopCanceled || stop == "" {
		state = store.TurnIncomplete
	}
	if !s.turns.dead.Load() {
		sctx, cancel := s.storeCtx()
		if _, err := s.cfg.Store.EndTurn(store.WithFence(sctx, lt.fence), lt.id, s.turns.replica, state); err != nil && !errors.Is(err, store.ErrFenced) {
			s.logger.Warn("ending a turn", "turn", lt.id, "error", err)
		}
		cancel()
	}
	s.turns.mu.Lock()
	delete(s.turns.local, lt.id)
	s.turns.mu.Unlock()
	lt.cancel(nil)
	s.wake(lt.id)
	s.changes.Changed() // the conversation's title and export changed
}

// record adds one event to a local turn; logEvents writes it to the store,
// then hands it to the streams.
func (s *Server) record(lt *localTurn, ev agent.Event) {
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

// endingWait bounds how long a new turn waits for a conversation's turn
// that has sent its last event to be marked ended.
const endingWait = 3 * time.Second

// awaitEnding waits, briefly, for conv's running turn to be released when
// it has already logged its last event, and reports whether it was. A
// client may send its next message as soon as it reads message_end, which
// is logged (and streamed) before the owner marks the turn ended; that
// message must not get a 409. A turn still answering is not waited for.
func (s *Server) awaitEnding(ctx context.Context, conv string) bool {
	t, err := s.cfg.Store.RunningTurn(ctx, conv)
	if errors.Is(err, store.ErrNotFound) {
		return true // released meanwhile
	}
	if err != nil || !s.finishing(ctx, t.ID) {
		return false
	}
	wait := time.NewTimer(endingWait)
	defer wait.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-wait.C:
			return false
		case <-tick.C:
			if _, err := s.cfg.Store.RunningTurn(ctx, conv); errors.Is(err, store.ErrNotFound) {
				return true
			}
		}
	}
}

// finishing reports whether turn id has logged its last event: from memory
// when this replica runs it, else from the tail of its log.
func (s *Server) finishing(ctx context.Context, id string) bool {
	if lt := s.localTurn(id); lt != nil {
		lt.mu.Lock()
		defer lt.mu.Unlock()
		return lt.ended || len(lt.events) > 0 && isEnd(lt.events[len(lt.events)-1].Data)
	}
	const page = 512
	var after int64
	var last []byte
	for range 64 { // a turn's log is bounded well below 64 pages
		evs, err := s.cfg.Store.TurnEvents(ctx, id, after, page)
		if err != nil || len(evs) == 0 {
			break
		}
		last, after = evs[len(evs)-1].Data, evs[len(evs)-1].Seq
		if len(evs) < page {
			break
		}
	}
	return last != nil && isEnd(last)
}

// isEnd reports whether an event is the last of its turn. Events written
// by this server (agent.Encode) start with their type, so most are told
// apart without decoding the rest (a tool's result can be kilobytes).
func isEnd(data []byte) bool {
	const typeKey = `{"type":"`
	if t, ok := bytes.CutPrefix(data, []byte(typeKey)); ok {
		if !bytes.HasPrefix(t, []byte(agent.TypeMessageEnd+`"`)) {
			// Another type: decoding would only confirm it, unless the
			// object names a type twice, which agent.Encode never writes.
			return false
		}
	}
	var head struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(data, &head) == nil && head.Type == string(agent.TypeMessageEnd)
}

// streamTurn sends turn id's events after seq after as SSE, until the turn
// ends, the client leaves or the server shuts down. It answers 204 when the
// turn has ended and there is nothing left to send.
func (s *Server) streamTurn(w http.ResponseWriter, r *http.Request, id string, after int64) {
	s.streams.Add(1)
	defer s.streams.Done()
	s.metrics.streamsOpen.Inc()
	defer s.metrics.streamsOpen.Dec()
	wake, unsubscribe := s.subscribe(id)
	defer unsubscribe()
	out := newSSE(w, s.cfg.HeartbeatInterval, s.cfg.WriteTimeout)
	defer out.close()
	ctx := r.Context()
	for {
		var evs []store.TurnEvent
		ended := false
		if lt := s.localTurn(id); lt != nil {
			evs, ended = lt.after(after)
		} else {
			var err error
			evs, err = s.cfg.Store.TurnEvents(ctx, id, after, turnReadBatch)
			if err != nil {
				if !out.begun() && ctx.Err() == nil {
					writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "the turn's events cannot be read now; retry")
				}
				return
			}
			if len(evs) == 0 {
				// Nothing new: has the turn ended (its last events may
				// have been logged just before)? A turn is marked ended
				// only once its log is closed, by its owner or by the
				// replica that took it over when its owner stopped.
				t, err := s.cfg.Store.GetTurn(ctx, id)
				if err != nil || t.State != store.TurnRunning {
					if evs, err = s.cfg.Store.TurnEvents(ctx, id, after, turnReadBatch); err != nil || len(evs) == 0 {
						ended = true
					}
				}
			}
		}
		for _, ev := range evs {
			out.send(id+":"+strconv.FormatInt(ev.Seq, 10), ev.Data)
			after = ev.Seq
			if isEnd(ev.Data) {
				return
			}
		}
		if out.failedWrite() {
			return
		}
		if len(evs) == 0 && ended {
			if !out.begun() {
				w.Header().Set("Cache-Control", "no-store")
				w.WriteHeader(http.StatusNoContent)
			}
			return
		}
		if len(evs) >= turnReadBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-time.After(turnPoll):
		}
	}
}

// maxResumeSeq bounds the sequence number a Last-Event-ID may carry.
const maxResumeSeq = 1 << 40

// resumePoint reads where a client resumes: the Last-Event-ID header, or the
// lastEventId query parameter (for an EventSource's first request), as
// "<turn id>:<seq>" or "<seq>". ok is false when it is malformed.
func resumePoint(r *http.Request) (turnID string, seq int64, ok bool) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", 0, true
	}
	if len(v) > 128 {
		return "", 0, false
	}
	n := v
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		turnID, n = v[:i], v[i+1:]
		if turnID == "" || strings.ContainsAny(turnID, " \t\r\n:") {
			return "", 0, false
		}
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seq < 0 || seq > maxResumeSeq {
		return "", 0, false
	}
	return turnID, seq, true
}

// postMessage starts a turn and streams it. The turn goes on when the client
// leaves; the client can resume with GET …/turns/{turnId}/events or
// GET …/stream, or stop it with POST …/stop.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body struct {
		Content *string `json:"content"`
	}
	if !s.decodeBody(w, r, &body, false) {
		return
	}
	if body.Content == nil || strings.TrimSpace(*body.Content) == "" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"content" must be a non-empty string`)
		return
	}
	err := s.runStreamedTurn(w, r, id, func(ctx context.Context, emit func(agent.Event)) error {
		return s.agent.Turn(ctx, id, *body.Content, emit)
	})
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such conversation")
	case errors.Is(err, agent.ErrEmptyMessage):
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"content" must be a non-empty string`)
	default:
		s.storeError(w, r, err)
	}
}

// turnFunc runs one turn of the agent (a new message, a regenerated answer
// or an edit), sending its events to emit.
type turnFunc func(ctx context.Context, emit func(agent.Event)) error

// runStreamedTurn claims conversation conv, starts run as its turn and
// streams the turn's events as the response. It answers 409 itself when the
// conversation is busy; it returns the error of a turn that could not start,
// for the caller to answer, and nil once the stream began.
func (s *Server) runStreamedTurn(w http.ResponseWriter, r *http.Request, conv string, run turnFunc) error {
	lt, started, err := s.startTurn(r.Context(), conv, run)
	switch {
	case errors.Is(err, store.ErrBusy):
		writeError(w, http.StatusConflict, "CONFLICT", "a reply is already being written in this conversation")
		return nil
	case err != nil:
		return err
	}
	select {
	case err := <-started:
		if err != nil {
			return err
		}
	case <-r.Context().Done():
		return nil
	}
	w.Header().Set("Toolport-Turn-Id", lt.id)
	s.streamTurn(w, r, lt.id, 0)
	return nil
}

// turnEvents resumes a turn's stream: GET
// /api/conversations/{id}/turns/{turnId}/events with Last-Event-ID.
func (s *Server) turnEvents(w http.ResponseWriter, r *http.Request) {
	tid, seq, ok := resumePoint(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `Last-Event-ID must be "<turn id>:<seq>" or "<seq>" as the stream sent it`)
		return
	}
	id := r.PathValue("turnId")
	if tid != "" && tid != id {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "Last-Event-ID names another turn")
		return
	}
	t, err := s.cfg.Store.GetTurn(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.ConversationID != r.PathValue("id")) {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such turn in this conversation (its events are kept for a while after it ends)")
		return
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	w.Header().Set("Toolport-Turn-Id", id)
	s.streamTurn(w, r, id, seq)
}

// conversationStream follows a conversation's turn: GET
// /api/conversations/{id}/stream streams the running turn from its start, or,
// with Last-Event-ID, the turn it names after that event. 204 when no turn runs.
func (s *Server) conversationStream(w http.ResponseWriter, r *http.Request) {
	tid, seq, ok := resumePoint(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `Last-Event-ID must be "<turn id>:<seq>" as the stream sent it`)
		return
	}
	conv := r.PathValue("id")
	var t store.Turn
	var err error
	if tid != "" {
		t, err = s.cfg.Store.GetTurn(r.Context(), tid)
		if err == nil && t.ConversationID != conv {
			err = store.ErrNotFound
		}
	} else {
		seq = 0
		s.expire(r.Context(), conv)
		t, err = s.cfg.Store.RunningTurn(r.Context(), conv)
	}
	if errors.Is(err, store.ErrNotFound) {
		if _, cerr := s.cfg.Store.GetConversation(r.Context(), conv); cerr != nil {
			s.storeError(w, r, cerr)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	w.Header().Set("Toolport-Turn-Id", t.ID)
	s.streamTurn(w, r, t.ID, seq)
}

// stopTurn stops a conversation's running turn, on whichever replica runs it:
// POST /api/conversations/{id}/stop, optionally {"turnId": "…"} to stop only
// that turn. 202 with the turn's id when a stop was asked for; 200 with
// "stopping": false when no turn runs.
func (s *Server) stopTurn(w http.ResponseWriter, r *http.Request) {
	var body struct {
		TurnID string `json:"turnId"`
	}
	if !s.decodeBody(w, r, &body, true) {
		return
	}
	conv := r.PathValue("id")
	t, err := s.cfg.Store.RunningTurn(r.Context(), conv)
	if errors.Is(err, store.ErrNotFound) || (err == nil && body.TurnID != "" && body.TurnID != t.ID) {
		if _, cerr := s.cfg.Store.GetConversation(r.Context(), conv); cerr != nil {
			s.storeError(w, r, cerr)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"turnId": nil, "stopping": false})
		return
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if lt := s.localTurn(t.ID); lt != nil {
		lt.cancel(errStopRequested)
	} else if _, err := s.cfg.Store.RequestStop(r.Context(), t.ID); err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"turnId": t.ID, "stopping": true})
}

func (s *Server) deleteConversation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	err := s.cfg.Store.DeleteIdleConversation(r.Context(), id, time.Now())
	switch {
	case errors.Is(err, store.ErrBusy):
		writeError(w, http.StatusConflict, "CONFLICT", "a reply is being written in this conversation; stop it first")
	case err != nil:
		s.storeError(w, r, err)
	default:
		s.changes.Changed()
		w.WriteHeader(http.StatusNoContent)
	}
}
