package turn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/store"
)

// Defaults of [Config].
const (
	DefaultLease           = 15 * time.Second
	DefaultEventsRetention = 10 * time.Minute
	DefaultStartPrecedence = 200 * time.Millisecond
)

const (
	// pollInterval is how often a follower of another replica's turn
	// re-reads the log when no note came (notes can be lost while the
	// listening connection reconnects).
	pollInterval = 2 * time.Second
	// readBatch bounds the events read from the store at once.
	readBatch = 500
	// storeOpTimeout bounds a store call made on behalf of a turn.
	storeOpTimeout = 5 * time.Second
	// endingWait bounds how long a new turn waits for a conversation's
	// turn that has sent its last event to be marked ended.
	endingWait = 3 * time.Second
)

var (
	errStopRequested = errors.New("the turn was stopped")
	errLeaseLost     = errors.New("the turn's lease was lost")
	// ErrShuttingDown is the cause a turn is canceled with when its
	// replica shuts down.
	ErrShuttingDown = errors.New("the server is shutting down")
)

// Func runs one turn of the agent (a new message, a regenerated answer or
// an edit), sending its events to emit. Its writes to the conversation are
// made under fence, the turn's claim.
type Func func(ctx context.Context, fence store.Fence, emit func(agent.Event)) error

// Answers is the layer that writes a conversation's messages; the manager
// asks it to close the answer of a turn whose replica stopped.
// [*agent.Agent] implements it.
type Answers interface {
	CloseLost(ctx context.Context, f store.Fence, conv string, logged []json.RawMessage) ([]agent.Event, error)
}

// Config configures a [Manager]. Store and Answers are required.
type Config struct {
	Store   store.Turns
	Answers Answers
	// Replica names this process among those sharing Store (it owns the
	// turns it runs); "" means a random one.
	Replica string
	// Lease is how long a turn's claim holds without renewal (renewed
	// every Lease/3); 0 means DefaultLease.
	Lease time.Duration
	// EventsRetention is how long an ended turn's log is kept for clients
	// resuming late; 0 means DefaultEventsRetention.
	EventsRetention time.Duration
	// StartPrecedence is the most a running turn waits, each time, while
	// other turns are starting (see the package doc); 0 means
	// DefaultStartPrecedence, a negative value turns it off.
	StartPrecedence time.Duration
	// Clock is the lease clock, which also paces lease renewal and the
	// sweeper; nil means the system clock. Replicas' clocks must agree to
	// well within Lease.
	Clock Clock
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
	// Ended, when set, is called after each turn this replica ran has
	// ended (its conversation's messages and title changed).
	Ended func(conv string)
}

// Manager runs this replica's turns and follows every replica's. Its
// methods are safe for concurrent use.
type Manager struct {
	cfg    Config
	gate   *gate
	logger *slog.Logger
	dead   atomic.Bool // set by Kill: no more writes

	bg        context.Context
	bgCancel  context.CancelFunc
	bgWG      sync.WaitGroup
	stopTicks func() // stops lease renewal and the sweeper

	base       context.Context // parent of every turn's context
	cancelBase context.CancelCauseFunc
	wg         sync.WaitGroup // running turn goroutines

	mu     sync.Mutex
	local  map[string]*localTurn
	wakers map[string]map[chan struct{}]struct{}
}

// New returns a manager for cfg and starts its background work: lease
// renewal, the sweeper of lost and expired turns, and watching the store's
// notes. Close stops it.
func New(cfg Config) (*Manager, error) {
	if cfg.Store == nil || cfg.Answers == nil {
		return nil, errors.New("turn: Config.Store and Answers are required")
	}
	if cfg.Replica == "" {
		cfg.Replica = uuid.NewString()
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.EventsRetention <= 0 {
		cfg.EventsRetention = DefaultEventsRetention
	}
	if cfg.StartPrecedence == 0 {
		cfg.StartPrecedence = DefaultStartPrecedence
	}
	if cfg.Clock == nil {
		cfg.Clock = systemClock{}
	}
	if cfg.Ended == nil {
		cfg.Ended = func(string) {}
	}
	m := &Manager{cfg: cfg, gate: newGate(cfg.StartPrecedence), logger: cfg.Logger,
		local: map[string]*localTurn{}, wakers: map[string]map[chan struct{}]struct{}{}}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	m.bg, m.bgCancel = context.WithCancel(context.Background())
	m.base, m.cancelBase = context.WithCancelCause(context.Background())
	// Registered before New returns, so that a test's clock, moved as soon
	// as New returns, cannot miss their first pass.
	stopRenew := cfg.Clock.Every(cfg.Lease/3, m.renew)
	stopSweep := cfg.Clock.Every(cfg.Lease/2, m.sweep)
	m.stopTicks = func() { stopRenew(); stopSweep() }
	m.bgWG.Go(func() {
		if err := cfg.Store.WatchTurns(m.bg, m.onNote); err != nil {
			m.logger.Error("watching turns", "error", err)
		}
	})
	return m, nil
}

// Replica returns the name this manager owns turns under.
func (m *Manager) Replica() string { return m.cfg.Replica }

// Now is the lease clock's time, for callers that compare leases
// themselves (a conversation is deleted only when no lease holds it).
func (m *Manager) Now() time.Time { return m.cfg.Clock.Now() }

// Close cancels the running turns (each saves what it has, marked
// incomplete), waiting for them up to the agent's save timeout, and stops
// the background work.
func (m *Manager) Close() {
	m.Cancel(ErrShuttingDown)
	m.bgCancel()
	m.stopTicks()
	m.bgWG.Wait()
}

// Cancel cancels every turn running on this replica with cause and waits,
// at most the agent's save timeout, for them to end.
func (m *Manager) Cancel(cause error) {
	m.cancelBase(cause)
	WaitUntil(&m.wg, time.After(agent.DefaultSaveTimeout))
}

// Wait waits until no turn runs on this replica, or ctx ends; it reports
// whether they all ended.
func (m *Manager) Wait(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// Kill simulates the process dying, for tests of the other replicas:
// background work (lease renewal, the sweeper, notes) stops and running
// turns are canceled, and nothing more about them is written (no end, no
// more events).
func (m *Manager) Kill() {
	m.dead.Store(true)
	m.bgCancel()
	m.stopTicks()
	m.bgWG.Wait()
	m.cancelBase(errors.New("killed"))
}

// HoldStart counts a turn as starting until release is called, as a turn
// between its claim and its first logged event is counted (for tests of the
// start gate).
func (m *Manager) HoldStart() (release func()) { return m.gate.enter() }

// WaitUntil waits for wg or until stop fires; it reports whether wg finished.
// The server drains its streams with it as the manager drains its turns.
func WaitUntil(wg *sync.WaitGroup, stop <-chan time.Time) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-stop:
		return false
	}
}

// storeCtx is a context for a store call made for a turn: not canceled with
// the turn (its last events and end must be written), but bounded.
func storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeOpTimeout)
}

// Start claims conversation conv for a new turn and runs run as it, on a
// goroutine detached from ctx (bounded by the agent's turn timeout and the
// manager's Close). It returns the turn's id once the turn emitted its
// first event; the error that kept it from starting ([store.ErrBusy] when
// another turn runs in conv and does not end at once, [store.ErrNotFound]
// for no such conversation, or run's error before its first event); or
// ctx's error when ctx ends first, while the turn goes on.
func (m *Manager) Start(ctx context.Context, conv string, run Func) (string, error) {
	lt, started, err := m.start(ctx, conv, run)
	if err != nil {
		return "", err
	}
	select {
	case err := <-started:
		if err != nil {
			return "", err
		}
		return lt.id, nil
	case <-ctx.Done():
		return "", fmt.Errorf("turn: waiting for the turn to start: %w", ctx.Err())
	}
}

// start claims the conversation and starts the turn; the channel gets nil
// once the turn's first event is recorded, or the error that kept it from
// starting.
func (m *Manager) start(ctx context.Context, conv string, run Func) (*localTurn, <-chan error, error) {
	// Counted as starting from here, its claim included (under a burst on
	// PostgreSQL the claims themselves queue), to its first event; not
	// while it waits for a busy conversation's turn to end, which can take
	// seconds.
	counted := m.gate.enter()
	id := uuid.NewString()
	claim := store.Turn{ID: id, ConversationID: conv, Owner: m.cfg.Replica}
	claim.LeaseUntil = m.cfg.Clock.Now().Add(m.cfg.Lease)
	claimed, err := m.cfg.Store.StartTurn(ctx, claim)
	if errors.Is(err, store.ErrBusy) {
		// The turn in the way may be one whose replica died: end it if its
		// lease lapsed, and try once more.
		m.Repair(ctx, conv)
		claim.LeaseUntil = m.cfg.Clock.Now().Add(m.cfg.Lease)
		claimed, err = m.cfg.Store.StartTurn(ctx, claim)
	}
	if errors.Is(err, store.ErrBusy) {
		counted()
		ended := m.awaitEnding(ctx, conv)
		counted = m.gate.enter()
		if ended {
			claim.LeaseUntil = m.cfg.Clock.Now().Add(m.cfg.Lease)
			claimed, err = m.cfg.Store.StartTurn(ctx, claim)
		}
	}
	if err != nil {
		counted()
		return nil, nil, err
	}
	fence := store.Fence{TurnID: id, Generation: claimed.Generation}
	tctx, cancel := context.WithCancelCause(m.base)
	lt := &localTurn{id: id, conv: conv, cancel: cancel, fence: fence, more: make(chan struct{}, 1), flushed: make(chan struct{}), started: counted}
	lt.leaseUntil.Store(claim.LeaseUntil.UnixNano())
	m.mu.Lock()
	m.local[id] = lt
	m.mu.Unlock()
	started := make(chan error, 1)
	m.wg.Add(1)
	go m.logEvents(lt)
	go m.run(tctx, lt, run, started)
	return lt, started, nil
}

func (m *Manager) run(ctx context.Context, lt *localTurn, run Func, started chan<- error) {
	defer m.wg.Done()
	var once sync.Once
	stop := ""
	first := true
	emit := func(ev agent.Event) {
		if end, ok := ev.(agent.MessageEnd); ok {
			stop = end.StopReason
		}
		if !first {
			m.gate.wait(ctx)
		}
		lt.record(ev)
		once.Do(func() { started <- nil })
		if first {
			// The turn's work (the model call, tools) waits too, not only
			// its events: its CPU would otherwise go to the model request
			// and the stream's decoding while other messages still wait
			// for their first event.
			first = false
			m.gate.wait(ctx)
		}
	}
	err := run(ctx, lt.fence, emit)
	lt.started() // a turn that failed before its first event
	// The log is complete before the turn is marked ended, so that a
	// follower elsewhere that sees it ended has read everything.
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
	if !m.dead.Load() {
		sctx, cancel := storeCtx()
		if _, err := m.cfg.Store.Fenced(lt.fence).EndTurn(sctx, lt.id, m.cfg.Replica, state); err != nil && !errors.Is(err, store.ErrFenced) {
			m.logger.Warn("ending a turn", "turn", lt.id, "error", err)
		}
		cancel()
	}
	m.mu.Lock()
	delete(m.local, lt.id)
	m.mu.Unlock()
	lt.cancel(nil)
	m.wake(lt.id)
	m.cfg.Ended(lt.conv)
}

// Get returns turn id as the store has it, or [store.ErrNotFound].
func (m *Manager) Get(ctx context.Context, id string) (store.Turn, error) {
	return m.cfg.Store.GetTurn(ctx, id)
}

// Running returns the turn running in conversation conv, or
// [store.ErrNotFound]; a turn whose replica stopped is repaired first.
func (m *Manager) Running(ctx context.Context, conv string) (store.Turn, error) {
	m.Repair(ctx, conv)
	return m.cfg.Store.RunningTurn(ctx, conv)
}

// Stop asks conversation conv's running turn to stop, on whichever replica
// runs it, and returns its id; with turnID not "", only that turn.
// [store.ErrNotFound] when no such turn runs.
func (m *Manager) Stop(ctx context.Context, conv, turnID string) (string, error) {
	t, err := m.cfg.Store.RunningTurn(ctx, conv)
	if err != nil {
		return "", err
	}
	if turnID != "" && turnID != t.ID {
		return "", store.ErrNotFound
	}
	if lt := m.localTurn(t.ID); lt != nil {
		lt.cancel(errStopRequested)
	} else if _, err := m.cfg.Store.RequestStop(ctx, t.ID); err != nil {
		return "", err
	}
	return t.ID, nil
}

// awaitEnding waits, briefly, for conv's running turn to be released when
// it has already logged its last event, and reports whether it was. A
// client may send its next message as soon as it reads message_end, which
// is logged (and streamed) before the owner marks the turn ended; that
// message must not be refused as busy. A turn still answering is not
// waited for.
func (m *Manager) awaitEnding(ctx context.Context, conv string) bool {
	t, err := m.cfg.Store.RunningTurn(ctx, conv)
	if errors.Is(err, store.ErrNotFound) {
		return true // released meanwhile
	}
	if err != nil || !m.finishing(ctx, t.ID) {
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
			if _, err := m.cfg.Store.RunningTurn(ctx, conv); errors.Is(err, store.ErrNotFound) {
				return true
			}
		}
	}
}

// finishing reports whether turn id has logged its last event: from memory
// when this replica runs it, else from the tail of its log.
func (m *Manager) finishing(ctx context.Context, id string) bool {
	if lt := m.localTurn(id); lt != nil {
		lt.mu.Lock()
		defer lt.mu.Unlock()
		return lt.ended || len(lt.events) > 0 && agent.IsEnd(lt.events[len(lt.events)-1].Data)
	}
	const page = 512
	var after int64
	var last []byte
	for range 64 { // a turn's log is bounded well below 64 pages
		evs, err := m.cfg.Store.TurnEvents(ctx, id, after, page)
		if err != nil || len(evs) == 0 {
			break
		}
		last, after = evs[len(evs)-1].Data, evs[len(evs)-1].Seq
		if len(evs) < page {
			break
		}
	}
	return last != nil && agent.IsEnd(last)
}
