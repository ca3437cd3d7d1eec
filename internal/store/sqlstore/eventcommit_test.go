package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// TestEventGroupAnswersEachTurn: on PostgreSQL, one group of event appends
// of several turns is one statement in which each turn's fence is checked on
// its own: a stale turn is refused with a FencedError and none of its rows
// go in, the others' do, each with its note. A duplicate seq of one turn
// fails only that turn's call (the group is retried call by call).
func TestEventGroupAnswersEachTurn(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.Postgres))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, id := range []string{"a", "b", "c"} {
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.StartTurn(ctx, store.Turn{ID: id, ConversationID: c.ID, Owner: "r1", LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	notes := make(chan store.TurnNote, 100)
	go db.WatchTurns(ctx, func(n store.TurnNote) { notes <- n })
	waitNote(t, notes, func() { db.RequestStop(ctx, "a") }, func(n store.TurnNote) bool {
		return n.Kind == store.NoteStop && n.TurnID == "a"
	})

	evs := func(turn string, seqs ...int64) []store.TurnEvent {
		var out []store.TurnEvent
		for _, s := range seqs {
			out = append(out, store.TurnEvent{Seq: s, Data: fmt.Appendf(nil, `{"turn":%q,"seq":%d}`, turn, s)})
		}
		return out
	}
	req := func(turn string, gen int64, events []store.TurnEvent) *eventReq {
		last := events[len(events)-1].Seq
		return &eventReq{call: newCall(ctx), fence: store.Fence{TurnID: turn, Generation: gen}, events: events,
			note: encodeNote(store.TurnNote{Kind: store.NoteEvent, TurnID: turn, Seq: last})}
	}
	logged := func(turn string) []int64 {
		t.Helper()
		got, err := db.TurnEvents(ctx, turn, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, ev := range got {
			if want := fmt.Sprintf(`{"turn":%q,"seq":%d}`, turn, ev.Seq); string(ev.Data) != want {
				t.Errorf("turn %s seq %d = %s, want %s", turn, ev.Seq, ev.Data, want)
			}
			seqs = append(seqs, ev.Seq)
		}
		return seqs
	}

	// b runs under generation 1: generation 2 is a stale (or future) holder.
	batch := []*eventReq{req("c", 1, evs("c", 1, 2, 3)), req("b", 2, evs("b", 1)), req("a", 1, evs("a", 1, 2))}
	before := db.events.commits.Load()
	db.events.commit(batch)
	if got := db.events.commits.Load() - before; got != 1 {
		t.Errorf("the group took %d grouped statements, want 1", got)
	}
	for i, want := range []error{nil, store.ErrFenced, nil} {
		err := <-batch[i].err
		if !errors.Is(err, want) && (want != nil || err != nil) {
			t.Errorf("turn %s: %v, want %v", batch[i].fence.TurnID, err, want)
		}
	}
	// The refusal names the refused fence.
	r := req("b", 2, evs("b", 1))
	db.events.commit([]*eventReq{r, req("a", 1, evs("a", 3))})
	var fe *store.FencedError
	if err := <-r.err; !errors.As(err, &fe) || fe.TurnID != "b" || fe.Generation != 2 {
		t.Errorf("stale turn b = %v, want a FencedError for b at generation 2", err)
	}
	if got := logged("a"); fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("turn a logged %v, want [1 2 3]", got)
	}
	if got := logged("b"); len(got) != 0 {
		t.Errorf("fenced turn b logged %v, want nothing", got)
	}
	if got := logged("c"); fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("turn c logged %v, want [1 2 3]", got)
	}
	for _, want := range []store.TurnNote{{Kind: store.NoteEvent, TurnID: "c", Seq: 3}, {Kind: store.NoteEvent, TurnID: "a", Seq: 3}} {
		waitNote(t, notes, func() {}, func(n store.TurnNote) bool { return n == want })
	}

	// c's seq 3 again fails c's call alone.
	batch = []*eventReq{req("a", 1, evs("a", 4)), req("c", 1, evs("c", 4, 3)), req("b", 1, evs("b", 1))}
	db.events.commit(batch)
	for i, want := range []error{nil, store.ErrConflict, nil} {
		err := <-batch[i].err
		if !errors.Is(err, want) && (want != nil || err != nil) {
			t.Errorf("turn %s: %v, want %v", batch[i].fence.TurnID, err, want)
		}
	}
	for turn, want := range map[string]string{"a": "[1 2 3 4]", "b": "[1]", "c": "[1 2 3]"} {
		if got := logged(turn); fmt.Sprint(got) != want {
			t.Errorf("turn %s logged %v, want %s", turn, got, want)
		}
	}
}
