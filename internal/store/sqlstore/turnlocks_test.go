package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// TestTurnLocksNeverDeadlock: on PostgreSQL, two processes' group-committed
// batches of fenced appends, fenced answer updates and event appends run
// against lease renewals over all the turns (in a random order) and
// take-overs of all of them at once, all touching the same turn rows (event
// appends of several turns grouped in one statement, too). No
// write fails with anything but a FencedError (a deadlock, 40P01, would fail
// a whole batch), the appends are grouped, and every append that was
// acknowledged is stored.
func TestTurnLocksNeverDeadlock(t *testing.T) {
	dsn := storetest.DSN(t, storetest.Postgres)
	dbs := []*DB{openDB(t, dsn), openDB(t, dsn)}
	ctx := context.Background()
	const turns = 24
	run := 2 * time.Second
	if testing.Short() {
		run = 500 * time.Millisecond
	}

	type turn struct {
		id, conv string
		acked    []string // messages acknowledged by AppendMessage
	}
	ts := make([]*turn, turns)
	ids := make([]string, turns)
	for i := range ts {
		c, err := dbs[0].CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		// Turn ids sort apart from their conversations' (random) ids, so
		// that conversation order and turn order disagree within a batch.
		ts[i] = &turn{id: fmt.Sprintf("turn-%02d", i), conv: c.ID}
		ids[i] = ts[i].id
		if _, err := dbs[0].StartTurn(ctx, store.Turn{ID: ts[i].id, ConversationID: c.ID, Owner: "a", LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}

	stop := make(chan struct{})
	time.AfterFunc(run, func() { close(stop) })
	running := func() bool {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures failureLog
	failed := failures.add
	var fenced, writes int
	for i, tr := range ts {
		wg.Go(func() {
			db := dbs[i%2]
			var gen int64 = 1
			seq := int64(1)
			for k := 0; running(); k++ {
				fctx := db.Fenced(store.Fence{TurnID: tr.id, Generation: gen})
				m := store.Message{ConversationID: tr.conv, Role: store.RoleAssistant, Content: json.RawMessage(fmt.Sprintf(`[{"type":"text","text":"%d"}]`, k))}
				m, err := fctx.AppendMessage(ctx, m)
				if err == nil {
					tr.acked = append(tr.acked, m.ID)
					err = fctx.UpdateMessage(ctx, m)
				}
				if err == nil {
					err = fctx.AppendTurnEvents(ctx, tr.id, []store.TurnEvent{{Seq: seq, Data: json.RawMessage(`{}`)}})
					if err == nil {
						seq++
					}
				}
				mu.Lock()
				writes++
				mu.Unlock()
				switch {
				case errors.Is(err, store.ErrFenced):
					// Taken over: write on as the new holder.
					cur, err := db.GetTurn(ctx, tr.id)
					if err != nil {
						failed("get turn", err)
						return
					}
					gen = cur.Generation
					mu.Lock()
					fenced++
					mu.Unlock()
				case err != nil:
					failed("turn "+tr.id, err)
					return
				}
			}
		})
	}
	for i, db := range dbs {
		wg.Go(func() {
			order := append([]string(nil), ids...)
			for running() {
				rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, owner := range []string{"a", "b"} {
					if _, err := db.RenewTurns(ctx, owner, order, time.Now().Add(time.Hour)); err != nil {
						failed("renew", err)
						return
					}
				}
			}
		})
		wg.Go(func() {
			owner := []string{"a", "b"}[i]
			for running() {
				// Every turn's lease has lapsed by then: all are taken.
				later := time.Now().Add(2 * time.Hour)
				if _, err := db.TakeOverTurns(ctx, later, "", owner, later.Add(time.Hour), nil); err != nil {
					failed("take over", err)
					return
				}
				pace(5 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	failures.report(t)
	t.Logf("%d rounds of writes, %d fenced by a take-over", writes, fenced)
	if fenced == 0 {
		t.Error("no write was fenced: the take-overs did not race the writes")
	}

	// The fenced appends went through the group commit, several a
	// statement at least sometimes (the fences checked per append in it).
	acked := 0
	for _, tr := range ts {
		acked += len(tr.acked)
	}
	if grouped := dbs[0].messages.grouped.Load() + dbs[1].messages.grouped.Load(); grouped == 0 {
		t.Errorf("%d fenced appends acknowledged, none in a statement with another", acked)
	} else {
		t.Logf("%d fenced appends acknowledged; %d statements carried several", acked, grouped)
	}

	// The event appends went through their group commit too, several turns
	// a statement at least sometimes (the fences checked per turn in it).
	if grouped := dbs[0].events.commits.Load() + dbs[1].events.commits.Load(); grouped == 0 {
		t.Error("no event append was group-committed with another turn's")
	} else {
		t.Logf("%d statements carried several turns' events", grouped)
	}

	for _, tr := range ts {
		c, err := dbs[0].GetConversation(ctx, tr.conv)
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]bool{}
		for _, m := range c.Messages {
			stored[m.ID] = true
		}
		for _, id := range tr.acked {
			if !stored[id] {
				t.Errorf("turn %s: acknowledged message %s is not stored", tr.id, id)
			}
		}
	}
}

// TestDeletesNeverDeadlockWithFencedWrites: on PostgreSQL, conversations
// whose turns' leases lapsed are deleted (DeleteIdleConversation, and
// DeleteConversation) while their stalled writers go on appending messages
// and events under their fences, grouped with other conversations' writes.
// Each write is stored, refused by its fence, or finds its conversation
// gone; nothing deadlocks (40P01), which the delete's cascade could, locking
// the conversation before its turns while a batch held a turn and waited
// for the conversation.
func TestDeletesNeverDeadlockWithFencedWrites(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.Postgres))
	ctx := context.Background()
	rounds, perRound := 40, 8
	if testing.Short() {
		rounds = 10
	}
	var mu sync.Mutex
	var failures failureLog
	failed := failures.add
	var deleted int
	for r := range rounds {
		var wg sync.WaitGroup
		for i := range perRound {
			c, err := db.CreateConversation(ctx, store.Conversation{})
			if err != nil {
				t.Fatal(err)
			}
			id := fmt.Sprintf("turn-%d-%d", r, i)
			// The lease lapsed: the conversation is idle to a delete, while
			// the turn's fence still holds for its stalled writer.
			if _, err := db.StartTurn(ctx, store.Turn{ID: id, ConversationID: c.ID, Owner: "a", LeaseUntil: time.Now().Add(-time.Minute)}); err != nil {
				t.Fatal(err)
			}
			fctx := db.Fenced(store.Fence{TurnID: id, Generation: 1})
			gone := make(chan struct{}) // the delete returned
			for w := range 3 {
				wg.Go(func() {
					for k := int64(1); ; k++ {
						select {
						case <-gone:
							// One write more: it must find the turn gone.
							defer func() {
								if _, err := fctx.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant, Content: textContent("late")}); !errors.Is(err, store.ErrFenced) && !errors.Is(err, store.ErrNotFound) {
									failed("write after the delete", fmt.Errorf("%v, want ErrFenced or ErrNotFound", err))
								}
							}()
							return
						default:
						}
						_, err := fctx.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant, Content: textContent("late")})
						if err == nil {
							err = fctx.AppendTurnEvents(ctx, id, []store.TurnEvent{{Seq: int64(w)*1000 + k, Data: json.RawMessage(`{}`)}})
						}
						switch {
						case err == nil:
						case errors.Is(err, store.ErrFenced), errors.Is(err, store.ErrNotFound):
							return // the turn went with its conversation
						default:
							failed("fenced write", err)
							return
						}
					}
				})
			}
			wg.Go(func() {
				defer close(gone)
				pace(time.Duration(rand.IntN(3)) * time.Millisecond)
				var err error
				if i%2 == 0 {
					err = db.DeleteIdleConversation(ctx, c.ID, time.Now())
				} else {
					err = db.DeleteConversation(ctx, c.ID)
				}
				if err != nil {
					failed("delete", err)
					return
				}
				mu.Lock()
				deleted++
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	failures.report(t)
	if deleted != rounds*perRound {
		t.Errorf("%d conversations deleted, want %d", deleted, rounds*perRound)
	}
}

// failureLog keeps the first failures of concurrent writers, for the test
// to report once they have stopped.
type failureLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *failureLog) add(what string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 10 {
		l.errs = append(l.errs, fmt.Errorf("%s: %w", what, err))
	}
}

func (l *failureLog) report(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, err := range l.errs {
		t.Error(err)
	}
}

// pace is a stress test's pacing: take-overs spaced so that writes land
// between them, a delete let go at a random moment among the writes. The
// races these tests look for are between real concurrent statements on the
// database; which interleaving comes is what varies, and no order is
// imposed on the goroutines.
func pace(d time.Duration) { time.Sleep(d) }
