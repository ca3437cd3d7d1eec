package turn_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/internal/turn"
)

// lateClock is a lease clock whose scheduled calls never come by
// themselves: the test moves its time and makes the calls (tick) or the
// sweeper's pass (Repair) by hand, as when, under load, the renewal due
// meanwhile is still waiting for a CPU or for the store.
type lateClock struct {
	mu   sync.Mutex
	now  time.Time
	jobs map[time.Duration]func()
}

func (c *lateClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *lateClock) Every(d time.Duration, f func()) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jobs == nil {
		c.jobs = map[time.Duration]func(){}
	}
	c.jobs[d] = f
	return func() {}
}

// tick makes the call scheduled every d.
func (c *lateClock) tick(d time.Duration) {
	c.mu.Lock()
	f := c.jobs[d]
	c.mu.Unlock()
	f()
}

func (c *lateClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// A replica's own running turn is not lost when its renewal comes late:
// its sweeper, passing after the lease lapsed, leaves it alone (it used
// to take it over and close it as lost, fencing the turn, whose answer
// then "could not be saved"); the turn goes on under its claim and ends
// with its own events.
func TestOwnTurnIsNotTakenOverWhenItsRenewalIsLate(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			db, err := sqlstore.Open(context.Background(), storetest.DSN(t, engine))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			// Whole seconds: the store keeps microseconds.
			clock := &lateClock{now: time.Now().Truncate(time.Second)}
			ans := &answers{}
			m, err := turn.New(turn.Config{Store: db, Answers: ans, Replica: "a", Lease: lease, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Close)
			ctx := context.Background()
			conv, id, stopped := startPartial(t, m, db)

			clock.advance(2 * lease) // no renewal ran: the lease lapsed in the store
			m.Repair(ctx, "")        // the sweeper's pass
			m.Repair(ctx, conv)      // a start's or a reader's, in this conversation
			if len(ans.calls) != 0 {
				t.Fatalf("the replica closed its own running turn as lost: %+v", ans.calls)
			}
			tr, err := m.Running(ctx, conv)
			if err != nil || tr.ID != id || tr.Owner != "a" || tr.Generation != 1 {
				t.Fatalf("running turn = %+v, %v; want %s, still a's first claim", tr, err, id)
			}
			select {
			case cause := <-stopped:
				t.Fatalf("the turn was stopped: %v", cause)
			default:
			}

			if _, err := m.Stop(ctx, conv, id); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			<-stopped
			want := []string{"message_start", "text_delta", "text_delta", "message_end"}
			if got := eventTypes(t, follow(t, m, id, 0, 0)); !equal(got, want) {
				t.Errorf("the turn's log: %v, want %v (its own events, none refused)", got, want)
			}
			if !m.Wait(ctx) {
				t.Fatal("the turn did not end")
			}
			if tr, err := m.Get(ctx, id); err != nil || tr.State == store.TurnRunning || tr.Owner != "a" || tr.Generation != 1 {
				t.Errorf("the turn = %+v, %v; want ended by a under its first claim", tr, err)
			}
		})
	}
}

// slowRenewals is a store whose lease renewals run out of their time, as a
// statement queued behind a burst of writes does: each takes the renewal
// period of the clock, then fails.
type slowRenewals struct {
	store.Turns
	clock  *lateClock
	period time.Duration
}

func (s *slowRenewals) RenewTurns(context.Context, string, []string, time.Time) (map[string]bool, error) {
	s.clock.advance(s.period)
	return nil, fmt.Errorf("store: renew turns: %w", context.DeadlineExceeded)
}

// One renewal that runs out of time does not give the replica's turns up:
// the next try starts at once, still within the lease. A turn is given up
// when that one fails too, at the end of its lease (before, one slow
// renewal gave up every turn of the replica). Which of the two ended a
// turn is told by its cause: the first cancel's stays.
func TestSlowRenewalDoesNotGiveTurnsUp(t *testing.T) {
	const lease = 15 * time.Second // renewed every 5 s
	const (
		stoppedCause = "the turn was stopped"
		lostCause    = "the turn's lease was lost"
	)
	db, err := sqlstore.Open(context.Background(), storetest.DSN(t, storetest.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clock := &lateClock{now: time.Now().Truncate(time.Second)}
	m, err := turn.New(turn.Config{Store: &slowRenewals{Turns: db, clock: clock, period: lease / 3},
		Answers: &answers{}, Replica: "a", Lease: lease, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ctx := context.Background()
	conv, id, stopped := startPartial(t, m, db)
	clock.advance(lease / 3)
	clock.tick(lease / 3) // from 5 s to 10 s into the lease, then fails
	if _, err := m.Stop(ctx, conv, id); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if cause := <-stopped; cause == nil || cause.Error() != stoppedCause {
		t.Errorf("after one slow renewal the turn ended with %v, want %q (not given up)", cause, stoppedCause)
	}
	if !m.Wait(ctx) {
		t.Fatal("the turn did not end")
	}

	_, _, stopped = startPartial(t, m, db)
	clock.advance(lease / 3)
	clock.tick(lease / 3) // from 5 s to 10 s
	clock.tick(lease / 3) // from 10 s to 15 s: the lease ends
	if cause := <-stopped; cause == nil || cause.Error() != lostCause {
		t.Errorf("after two slow renewals the turn ended with %v, want %q", cause, lostCause)
	}
}

// startPartial starts a partial turn on m in a new conversation and waits
// for its first two events; stopped gets the turn's cause once it is
// stopped.
func startPartial(t *testing.T, m *turn.Manager, db *sqlstore.DB) (conv, id string, stopped chan error) {
	t.Helper()
	conv = newConversation(t, db)
	stopped = make(chan error, 1)
	id, err := m.Start(context.Background(), conv, partial(stopped))
	if err != nil {
		t.Fatal(err)
	}
	follow(t, m, id, 0, 2)
	return conv, id, stopped
}
