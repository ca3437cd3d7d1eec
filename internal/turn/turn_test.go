package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/internal/turn"
	"github.com/toolport/toolport/internal/turn/turntest"
)

// lease is long enough that no renewal or sweep runs during a test: leases
// lapse only by the injected clock.
const lease = time.Hour

// answers records the lost turns it is asked to close and closes them as
// the agent does: an error, then message_end.
type answers struct {
	mu    sync.Mutex
	calls []closeCall
}

type closeCall struct {
	fence  store.Fence
	conv   string
	logged []string
}

func (a *answers) CloseLost(_ context.Context, f store.Fence, conv string, logged []json.RawMessage) ([]agent.Event, error) {
	c := closeCall{fence: f, conv: conv}
	for _, l := range logged {
		c.logged = append(c.logged, string(l))
	}
	a.mu.Lock()
	a.calls = append(a.calls, c)
	a.mu.Unlock()
	return []agent.Event{agent.ErrorEvent{Code: agent.CodeTurnLost, Message: "lost", Retryable: true},
		agent.MessageEnd{MessageID: "m1", StopReason: agent.StopError}}, nil
}

// replicas opens two managers sharing one store of engine: a on the real
// clock, b on a clock later than any of a's leases.
func replicas(t *testing.T, engine string) (a, b *turn.Manager, db *sqlstore.DB, ans *answers) {
	t.Helper()
	dsn := storetest.DSN(t, engine)
	open := func() *sqlstore.DB {
		db, err := sqlstore.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db = open()
	dbB := db // SQLite's notes go in memory: one process, one handle
	if engine == storetest.Postgres {
		dbB = open()
	}
	ans = &answers{}
	newManager := func(db *sqlstore.DB, replica string, clock turn.Clock) *turn.Manager {
		m, err := turn.New(turn.Config{Store: db, Answers: ans, Replica: replica, Lease: lease, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		return m
	}
	a = newManager(db, "a", nil)
	b = newManager(dbB, "b", turntest.NewClock(time.Now().Add(2*lease)))
	return a, b, db, ans
}

func newConversation(t *testing.T, db *sqlstore.DB) string {
	t.Helper()
	c, err := db.CreateConversation(context.Background(), store.Conversation{Title: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// partial is a turn that streams the start of an answer, then waits to be
// stopped; its context's cause goes to stopped.
func partial(stopped chan<- error) turn.Func {
	return func(ctx context.Context, _ store.Fence, emit func(agent.Event)) error {
		emit(agent.MessageStart{MessageID: "m1"})
		emit(agent.TextDelta{Content: "par"})
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		emit(agent.TextDelta{Content: "tial"})
		emit(agent.MessageEnd{MessageID: "m1", StopReason: agent.StopCanceled})
		return nil
	}
}

// follow collects turn id's events from seq after until the turn ends, or
// the first n when n > 0.
func follow(t *testing.T, m *turn.Manager, id string, after int64, n int) []string {
	t.Helper()
	var got []string
	err := m.Follow(context.Background(), id, after, func(ev store.TurnEvent) bool {
		got = append(got, string(ev.Data))
		return n <= 0 || len(got) < n
	})
	if err != nil {
		t.Fatalf("Follow: %v", err)
	}
	return got
}

func eventTypes(t *testing.T, evs []string) []string {
	t.Helper()
	var types []string
	for _, e := range evs {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(e), &head); err != nil {
			t.Fatalf("event %s: %v", e, err)
		}
		types = append(types, head.Type)
	}
	return types
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A turn's events are logged and followed in order, on the replica that
// runs it and on another; once it ended the conversation takes the next.
func TestTurnIsLoggedFollowedAndEnded(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			a, b, db, _ := replicas(t, engine)
			conv := newConversation(t, db)
			ctx := context.Background()
			id, err := a.Start(ctx, conv, func(_ context.Context, _ store.Fence, emit func(agent.Event)) error {
				emit(agent.MessageStart{MessageID: "m1"})
				emit(agent.TextDelta{Content: "hello"})
				emit(agent.MessageEnd{MessageID: "m1", StopReason: agent.StopEndTurn})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"message_start", "text_delta", "message_end"}
			if got := eventTypes(t, follow(t, a, id, 0, 0)); !equal(got, want) {
				t.Errorf("followed on its replica: %v, want %v", got, want)
			}
			if got := eventTypes(t, follow(t, b, id, 1, 0)); !equal(got, want[1:]) {
				t.Errorf("followed on another replica after seq 1: %v, want %v", got, want[1:])
			}
			if !a.Wait(ctx) {
				t.Fatal("Wait")
			}
			if tr, err := a.Get(ctx, id); err != nil || tr.State != store.TurnDone {
				t.Errorf("the ended turn = %+v, %v; want done", tr, err)
			}
			if _, err := b.Start(ctx, conv, func(context.Context, store.Fence, func(agent.Event)) error { return errors.New("no model") }); err == nil || errors.Is(err, store.ErrBusy) {
				t.Errorf("the next turn's start = %v, want its own error, not busy", err)
			}
		})
	}
}

// One turn runs in a conversation at a time, whichever replica starts the
// next; a stop reaches the turn on the replica that runs it.
func TestBusyConversationAndStop(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			a, b, db, _ := replicas(t, engine)
			conv := newConversation(t, db)
			ctx := context.Background()
			stopped := make(chan error, 1)
			id, err := a.Start(ctx, conv, partial(stopped))
			if err != nil {
				t.Fatal(err)
			}
			_ = b // b's clock has every lease lapsed; c is on the real clock
			c, err := turn.New(turn.Config{Store: db, Answers: &answers{}, Replica: "c", Lease: lease})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Start(ctx, conv, partial(make(chan error, 1))); !errors.Is(err, store.ErrBusy) {
				t.Fatalf("a second turn's start = %v, want store.ErrBusy", err)
			}
			if _, err := c.Stop(ctx, conv, "another-turn"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("stopping another turn = %v, want store.ErrNotFound", err)
			}
			if got, err := a.Stop(ctx, conv, ""); err != nil || got != id {
				t.Fatalf("Stop = %q, %v; want %q", got, err, id)
			}
			if cause := <-stopped; cause == nil {
				t.Error("the stopped turn's context has no cause")
			}
			if got := eventTypes(t, follow(t, a, id, 0, 0)); got[len(got)-1] != "message_end" {
				t.Errorf("the stopped turn's events: %v", got)
			}
		})
	}
}

// A replica that died mid-turn leaves its turn running until its lease
// lapses; the replica that repairs it then takes it over under the next
// generation, has its answer closed, ends its log with the closing events
// after what was logged, and ends it, freeing the conversation.
func TestRepairClosesALostTurn(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			a, b, db, ans := replicas(t, engine)
			conv := newConversation(t, db)
			ctx := context.Background()
			id, err := a.Start(ctx, conv, partial(make(chan error, 1)))
			if err != nil {
				t.Fatal(err)
			}
			logged := follow(t, a, id, 0, 2)
			a.Kill()

			b.Repair(ctx, conv)
			if len(ans.calls) != 1 {
				t.Fatalf("CloseLost calls = %+v, want 1", ans.calls)
			}
			call := ans.calls[0]
			if call.fence != (store.Fence{TurnID: id, Generation: 2}) || call.conv != conv || !equal(call.logged, logged) {
				t.Errorf("CloseLost(%+v, %q, %v), want fence {%s 2}, %q, %v", call.fence, call.conv, call.logged, id, conv, logged)
			}
			want := []string{"message_start", "text_delta", "error", "message_end"}
			if got := eventTypes(t, follow(t, b, id, 0, 0)); !equal(got, want) {
				t.Errorf("the repaired turn's log: %v, want %v", got, want)
			}
			if tr, err := b.Get(ctx, id); err != nil || tr.State != store.TurnIncomplete || tr.Owner != "b" {
				t.Errorf("the repaired turn = %+v, %v; want incomplete, owned by b", tr, err)
			}
			if _, err := b.Running(ctx, conv); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Running after the repair = %v, want store.ErrNotFound", err)
			}
			b.Repair(ctx, conv) // nothing left to repair
			if len(ans.calls) != 1 {
				t.Errorf("a second repair closed the turn again: %+v", ans.calls)
			}
		})
	}
}

// A replica that stalled past its lease, while another took its turn over,
// is fenced: the events it logs after the take-over are refused and the
// log keeps the taker's closing.
func TestTakenOverTurnIsFenced(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			a, b, db, _ := replicas(t, engine)
			ctx := context.Background()
			conv, id, stopped := startPartial(t, a, db)
			b.Repair(ctx, conv) // a is alive but, by b's clock, its lease lapsed
			if _, err := a.Stop(ctx, conv, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the taken-over turn still runs in the store: Stop = %v", err)
			}
			a.Cancel(errors.New("test over")) // a's turn logs its last events now
			if cause := <-stopped; cause == nil {
				t.Fatal("no cause")
			}
			want := []string{"message_start", "text_delta", "error", "message_end"}
			if got := eventTypes(t, follow(t, b, id, 0, 0)); !equal(got, want) {
				t.Errorf("the log: %v, want %v (the stalled replica's later events refused)", got, want)
			}
			if tr, err := b.Get(ctx, id); err != nil || tr.State != store.TurnIncomplete || tr.Owner != "b" {
				t.Errorf("the turn = %+v, %v; want incomplete, owned by b", tr, err)
			}
		})
	}
}

// Leases follow the manager's clock: a live replica's renewals, run as the
// clock passes each third of the lease, keep its turn through many leases
// while the other replica sweeps; once the replica dies, the other's
// sweeper takes the turn over at its first pass after the lease lapsed, not
// before.
func TestLeasesFollowTheClock(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			db, err := sqlstore.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			dbB := db
			if engine == storetest.Postgres {
				if dbB, err = sqlstore.Open(context.Background(), dsn); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { dbB.Close() })
			}
			const lease = 30 * time.Second // renewed every 10 s, swept every 15 s
			// Whole seconds: the store keeps microseconds.
			clock := turntest.NewClock(time.Now().Truncate(time.Second))
			ans := &answers{}
			newManager := func(db *sqlstore.DB, replica string) *turn.Manager {
				m, err := turn.New(turn.Config{Store: db, Answers: ans, Replica: replica, Lease: lease, Clock: clock})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(m.Close)
				return m
			}
			a, b := newManager(db, "a"), newManager(dbB, "b")
			conv := newConversation(t, db)
			ctx := context.Background()
			id, err := a.Start(ctx, conv, partial(make(chan error, 1)))
			if err != nil {
				t.Fatal(err)
			}
			follow(t, a, id, 0, 2)
			holds := func(what string) store.Turn {
				t.Helper()
				tr, err := b.Running(ctx, conv) // repairs first, as a start does
				if err != nil || tr.ID != id || tr.Owner != "a" {
					t.Fatalf("%s: running turn = %+v, %v; want %s on a", what, tr, err, id)
				}
				return tr
			}
			for range 3 {
				clock.Advance(lease)
				if tr := holds("a live replica's turn"); !tr.LeaseUntil.Equal(clock.Now().Add(lease)) {
					t.Errorf("lease until %v, want the last renewal's %v", tr.LeaseUntil, clock.Now().Add(lease))
				}
			}
			a.Kill()
			clock.Advance(lease / 2)
			holds("a dead replica's turn within its lease")
			clock.Advance(lease / 2) // the lease ends now: lapsed only after
			holds("a dead replica's turn at the end of its lease")
			if len(ans.calls) != 0 {
				t.Fatalf("closed within the lease: %+v", ans.calls)
			}
			clock.Advance(lease / 2)
			if len(ans.calls) != 1 || ans.calls[0].fence != (store.Fence{TurnID: id, Generation: 2}) {
				t.Fatalf("CloseLost calls after the sweeper's pass = %+v, want one for %s under generation 2", ans.calls, id)
			}
			if tr, err := b.Get(ctx, id); err != nil || tr.State != store.TurnIncomplete || tr.Owner != "b" {
				t.Errorf("the swept turn = %+v, %v; want incomplete, owned by b", tr, err)
			}
		})
	}
}
