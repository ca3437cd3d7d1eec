package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
)

func TestTurnLease(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		lease := time.Now().Add(time.Minute)
		if _, err := db.StartTurn(ctx, store.Turn{ID: "t1", ConversationID: c.ID, Owner: "a", LeaseUntil: lease}); err != nil {
			t.Fatalf("StartTurn: %v", err)
		}
		if _, err := db.StartTurn(ctx, store.Turn{ID: "t2", ConversationID: c.ID, Owner: "b", LeaseUntil: lease}); !errors.Is(err, store.ErrBusy) {
			t.Errorf("second StartTurn = %v, want ErrBusy", err)
		}
		if _, err := db.StartTurn(ctx, store.Turn{ID: "t3", ConversationID: "nope", Owner: "b", LeaseUntil: lease}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("StartTurn in a missing conversation = %v, want ErrNotFound", err)
		}
		if err := db.DeleteIdleConversation(ctx, c.ID, time.Now()); !errors.Is(err, store.ErrBusy) {
			t.Errorf("delete during a turn = %v, want ErrBusy", err)
		}
		got, err := db.RenewTurns(ctx, "a", []string{"t1", "other"}, time.Now().Add(2*time.Minute))
		if err != nil || len(got) != 1 || got["t1"] {
			t.Errorf("RenewTurns = %v, %v; want t1 without a stop", got, err)
		}
		if got, _ := db.RenewTurns(ctx, "b", []string{"t1"}, time.Now()); len(got) != 0 {
			t.Errorf("another owner renewed t1: %v", got)
		}
		if ok, err := db.RequestStop(ctx, "t1"); !ok || err != nil {
			t.Errorf("RequestStop = %v, %v", ok, err)
		}
		if got, _ := db.RenewTurns(ctx, "a", []string{"t1"}, time.Now().Add(time.Minute)); !got["t1"] {
			t.Errorf("renewal does not report the stop request: %v", got)
		}
		// Nothing has lapsed yet; then the owner stops renewing.
		if got, err := db.TakeOverTurns(ctx, time.Now(), "", "c", time.Now().Add(time.Minute), nil); err != nil || len(got) != 0 {
			t.Errorf("TakeOverTurns before the lease ends = %v, %v", got, err)
		}
		later := time.Now().Add(time.Hour)
		taken, err := db.TakeOverTurns(ctx, later, c.ID, "c", later.Add(time.Minute), nil)
		if err != nil || len(taken) != 1 || taken[0].ID != "t1" || taken[0].Owner != "c" || taken[0].State != store.TurnRunning {
			t.Fatalf("TakeOverTurns = %+v, %v", taken, err)
		}
		if got, _ := db.TakeOverTurns(ctx, later, "", "d", later.Add(time.Minute), nil); len(got) != 0 {
			t.Errorf("a lapsed turn was handed out twice: %+v", got)
		}
		// Until the taker ends it, the conversation stays claimed.
		if _, err := db.StartTurn(ctx, store.Turn{ID: "t2", ConversationID: c.ID, Owner: "b", LeaseUntil: lease}); !errors.Is(err, store.ErrBusy) {
			t.Errorf("StartTurn while a lost turn is being closed = %v, want ErrBusy", err)
		}
		if ok, err := db.EndTurn(ctx, "t1", "a", store.TurnDone); ok || err != nil {
			t.Errorf("EndTurn by the owner whose turn was taken over = %v, %v; want false", ok, err)
		}
		if ok, err := db.EndTurn(ctx, "t1", "c", store.TurnIncomplete); !ok || err != nil {
			t.Errorf("EndTurn by the taker = %v, %v", ok, err)
		}
		if old, err := db.GetTurn(ctx, "t1"); err != nil || old.State != store.TurnIncomplete {
			t.Errorf("lost turn = %+v, %v; want incomplete", old, err)
		}
		t2, err := db.StartTurn(ctx, store.Turn{ID: "t2", ConversationID: c.ID, Owner: "b", LeaseUntil: lease})
		if err != nil {
			t.Fatalf("StartTurn after expiry: %v", err)
		}
		if r, err := db.RunningTurn(ctx, c.ID); err != nil || r.ID != t2.ID || r.Owner != "b" {
			t.Errorf("RunningTurn = %+v, %v", r, err)
		}
		if ok, err := db.EndTurn(ctx, "t2", "b", store.TurnDone); !ok || err != nil {
			t.Errorf("EndTurn = %v, %v", ok, err)
		}
		if _, err := db.RunningTurn(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RunningTurn after the end = %v", err)
		}
		if n, err := db.DeleteEndedTurns(ctx, later.Add(time.Minute)); err != nil || n != 2 {
			t.Errorf("DeleteEndedTurns = %d, %v; want 2", n, err)
		}
		if err := db.DeleteIdleConversation(ctx, c.ID, time.Now()); err != nil {
			t.Errorf("delete when idle: %v", err)
		}
		if err := db.DeleteIdleConversation(ctx, c.ID, time.Now()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete twice = %v, want ErrNotFound", err)
		}
	})
}

func TestTurnClaimIsExclusiveUnderContention(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, _ := db.CreateConversation(ctx, store.Conversation{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 16 {
			wg.Go(func() {
				_, err := db.StartTurn(ctx, store.Turn{ID: fmt.Sprint("t", i), ConversationID: c.ID, Owner: "o", LeaseUntil: time.Now().Add(time.Minute)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case !errors.Is(err, store.ErrBusy):
					t.Errorf("StartTurn: %v", err)
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Errorf("%d turns claimed the conversation at once, want 1", won)
		}
	})
}

func TestTurnEventLogAndNotes(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c, _ := db.CreateConversation(ctx, store.Conversation{})
		if _, err := db.StartTurn(ctx, store.Turn{ID: "t1", ConversationID: c.ID, Owner: "a", LeaseUntil: time.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		notes := make(chan store.TurnNote, 100)
		go db.WatchTurns(ctx, func(n store.TurnNote) { notes <- n })
		// The watcher's LISTEN is set up asynchronously: send stop requests
		// until one arrives.
		waitNote(t, notes, func() { db.RequestStop(ctx, "t1") }, func(n store.TurnNote) bool {
			return n.Kind == store.NoteStop && n.TurnID == "t1"
		})
		ev := func(i int64) store.TurnEvent {
			return store.TurnEvent{Seq: i, Data: fmt.Appendf(nil, `{"type":"text_delta","content":"%d"}`, i)}
		}
		if err := db.AppendTurnEvents(ctx, "t1", []store.TurnEvent{ev(1)}); err != nil {
			t.Fatalf("AppendTurnEvents 1: %v", err)
		}
		if err := db.AppendTurnEvents(ctx, "t1", []store.TurnEvent{ev(2), ev(3)}); err != nil {
			t.Fatalf("AppendTurnEvents 2, 3: %v", err)
		}
		if err := db.AppendTurnEvents(ctx, "t1", []store.TurnEvent{ev(4), ev(2)}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("appending seq 2 again = %v, want ErrConflict", err)
		}
		if err := db.AppendTurnEvents(ctx, "t1", []store.TurnEvent{{Seq: 4, Data: []byte("a\x00b")}}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("appending a NUL = %v, want ErrInvalid", err)
		}
		waitNote(t, notes, func() {}, func(n store.TurnNote) bool {
			return n.Kind == store.NoteEvent && n.TurnID == "t1" && n.Seq == 3
		})
		evs, err := db.TurnEvents(ctx, "t1", 1, 10)
		if err != nil || len(evs) != 2 || evs[0].Seq != 2 || string(evs[1].Data) != `{"type":"text_delta","content":"3"}` {
			t.Errorf("TurnEvents after 1 = %+v, %v (seq 4 must not be half-written)", evs, err)
		}
		// A batch larger than one statement's rows.
		var many []store.TurnEvent
		for i := int64(4); i < 4+maxEventBatch+10; i++ {
			many = append(many, ev(i))
		}
		if err := db.AppendTurnEvents(ctx, "t1", many); err != nil {
			t.Fatalf("AppendTurnEvents of %d: %v", len(many), err)
		}
		if all, err := db.TurnEvents(ctx, "t1", 0, 1000); err != nil || len(all) != 3+len(many) || all[len(all)-1].Seq != int64(3+len(many)) {
			t.Errorf("after a large batch the log has %d events, %v", len(all), err)
		}
		if evs, err = db.TurnEvents(ctx, "t1", 1, 2); err != nil || len(evs) != 2 {
			t.Errorf("TurnEvents after 1 = %+v, %v", evs, err)
		}
		if _, err := db.EndTurn(ctx, "t1", "a", store.TurnDone); err != nil {
			t.Fatal(err)
		}
		waitNote(t, notes, func() {}, func(n store.TurnNote) bool { return n.Kind == store.NoteEnd && n.TurnID == "t1" })
		if _, err := db.DeleteEndedTurns(ctx, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if evs, _ := db.TurnEvents(ctx, "t1", 0, 10); len(evs) != 0 {
			t.Errorf("events outlived their turn: %+v", evs)
		}
	})
}

// waitNote calls poke until a note matching want arrives (a deadlock guard
// of 20 s, not a timing assertion).
func waitNote(t *testing.T, notes <-chan store.TurnNote, poke func(), want func(store.TurnNote) bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	poke()
	for {
		select {
		case n := <-notes:
			if want(n) {
				return
			}
		case <-tick.C:
			poke()
		case <-deadline:
			t.Fatal("the expected note never came")
		}
	}
}

func TestParseNote(t *testing.T) {
	tests := []struct {
		in   string
		want store.TurnNote
		ok   bool
	}{
		{"e abc 5", store.TurnNote{Kind: store.NoteEvent, TurnID: "abc", Seq: 5}, true},
		{"s abc", store.TurnNote{Kind: store.NoteStop, TurnID: "abc"}, true},
		{"x abc", store.TurnNote{Kind: store.NoteEnd, TurnID: "abc"}, true},
		{"e abc", store.TurnNote{}, false},
		{"e abc -1", store.TurnNote{}, false},
		{"e abc 99999999999999999999", store.TurnNote{}, false},
		{"s a b", store.TurnNote{}, false},
		{"q abc", store.TurnNote{}, false},
		{"", store.TurnNote{}, false},
		{"ee abc 1", store.TurnNote{}, false},
	}
	for _, tt := range tests {
		got, ok := parseNote(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseNote(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if ok && encodeNote(got) != tt.in {
			t.Errorf("encodeNote(%+v) = %q, want %q", got, encodeNote(got), tt.in)
		}
	}
}

// FuzzParseNote checks that any NOTIFY payload parses without panicking and
// that what parses encodes back to itself.
func FuzzParseNote(f *testing.F) {
	for _, s := range []string{"e abc 5", "s abc", "x abc", "e  1", "r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseNote(s)
		if ok && encodeNote(n) != s {
			// Leading zeros or "+" in seq are accepted but not produced.
			if m, ok2 := parseNote(encodeNote(n)); !ok2 || m != n {
				t.Errorf("%q parsed to %+v, which does not round-trip", s, n)
			}
		}
	})
}
