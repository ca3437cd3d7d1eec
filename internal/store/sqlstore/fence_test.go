package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
)

// TestStalledReplicaIsFenced: replica A claims a turn, logs an event and
// saves a partial answer, then stalls past its lease; replica B takes the
// turn over and closes it (its error event, the answer marked incomplete,
// the end). Every write A makes afterwards under its claim is refused with
// a FencedError, and the conversation and the log hold exactly B's closing.
func TestStalledReplicaIsFenced(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		claimed, err := db.StartTurn(ctx, store.Turn{ID: "turn-1", ConversationID: c.ID, Owner: "replica-a", LeaseUntil: time.Now().Add(time.Minute)})
		if err != nil || claimed.Generation != 1 {
			t.Fatalf("StartTurn = %+v, %v; want generation 1", claimed, err)
		}
		a := db.Fenced(store.Fence{TurnID: "turn-1", Generation: claimed.Generation})
		ev := func(seq int64, s string) store.TurnEvent { return store.TurnEvent{Seq: seq, Data: json.RawMessage(s)} }
		if err := a.AppendTurnEvents(ctx, "turn-1", []store.TurnEvent{ev(1, `{"type":"message_start","messageId":"m1"}`)}); err != nil {
			t.Fatalf("A's first event: %v", err)
		}
		answer := store.Message{ID: "m1", ConversationID: c.ID, Role: store.RoleAssistant, Content: json.RawMessage(`[{"type":"text","text":"par"}]`)}
		if _, err := a.AppendMessage(ctx, answer); err != nil {
			t.Fatalf("A's partial answer: %v", err)
		}

		// A stalls; its lease lapses and B takes the turn over.
		later := time.Now().Add(time.Hour)
		taken, err := db.TakeOverTurns(ctx, later, c.ID, "replica-b", later.Add(time.Minute), nil)
		if err != nil || len(taken) != 1 || taken[0].Generation != 2 {
			t.Fatalf("TakeOverTurns = %+v, %v; want turn-1 at generation 2", taken, err)
		}
		b := db.Fenced(store.Fence{TurnID: "turn-1", Generation: taken[0].Generation})
		lost := store.Message{ID: "m1", ConversationID: c.ID, Role: store.RoleAssistant, Content: json.RawMessage(`[{"type":"text","text":"par"}]`),
			Incomplete: true, Error: &store.MessageError{Code: "TURN_LOST", Message: "lost"}}
		if err := b.UpdateMessage(ctx, lost); err != nil {
			t.Fatalf("B marks the answer lost: %v", err)
		}
		if err := b.AppendTurnEvents(ctx, "turn-1", []store.TurnEvent{ev(2, `{"type":"error","code":"TURN_LOST"}`), ev(3, `{"type":"message_end","messageId":"m1"}`)}); err != nil {
			t.Fatalf("B closes the log: %v", err)
		}
		if ok, err := b.EndTurn(ctx, "turn-1", "replica-b", store.TurnIncomplete); !ok || err != nil {
			t.Fatalf("B ends the turn: %v, %v", ok, err)
		}

		// A wakes up and writes on as if it still held the turn.
		finished := answer
		finished.Content = json.RawMessage(`[{"type":"text","text":"partial answer, finished late"}]`)
		writes := map[string]func() error{
			"append events": func() error {
				return a.AppendTurnEvents(ctx, "turn-1", []store.TurnEvent{ev(4, `{"type":"text_delta","text":"late"}`)})
			},
			"append more events than one statement holds": func() error {
				var many []store.TurnEvent
				for seq := int64(10); seq < 10+maxEventBatch+10; seq++ {
					many = append(many, ev(seq, `{"type":"text_delta","text":"late"}`))
				}
				return a.AppendTurnEvents(ctx, "turn-1", many)
			},
			"update answer": func() error { return a.UpdateMessage(ctx, finished) },
			"append a message": func() error {
				_, err := a.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant, Content: json.RawMessage(`[]`)})
				return err
			},
			"end turn": func() error {
				_, err := a.EndTurn(ctx, "turn-1", "replica-a", store.TurnDone)
				return err
			},
			"truncate the conversation (an edit)": func() error {
				_, err := a.TruncateConversation(ctx, c.ID, "m1")
				return err
			},
			"set the title": func() error { return a.UpdateTitle(ctx, c.ID, "late title") },
		}
		for name, write := range writes {
			err := write()
			var fe *store.FencedError
			if !errors.Is(err, store.ErrFenced) || !errors.As(err, &fe) || fe.TurnID != "turn-1" || fe.Generation != 1 {
				t.Errorf("A's %s after the take-over = %v, want a FencedError for generation 1", name, err)
			}
		}

		got, err := db.GetConversation(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 1 {
			t.Fatalf("conversation holds %d messages, want B's closing only", len(got.Messages))
		}
		if got.Title != "" {
			t.Errorf("title = %q, set by the fenced replica", got.Title)
		}
		m := got.Messages[0]
		if !m.Incomplete || m.Error == nil || m.Error.Code != "TURN_LOST" || strings.Contains(string(m.Content), "finished late") {
			t.Errorf("answer = incomplete %v, error %+v, content %s; want B's closing", m.Incomplete, m.Error, m.Content)
		}
		evs, err := db.TurnEvents(ctx, "turn-1", 0, 100)
		if err != nil || len(evs) != 3 || string(evs[2].Data) != `{"type":"message_end","messageId":"m1"}` {
			t.Errorf("log = %d events (%v), want A's first and B's two closing ones", len(evs), err)
		}
		tr, err := db.GetTurn(ctx, "turn-1")
		if err != nil || tr.State != store.TurnIncomplete || tr.Owner != "replica-b" || tr.Generation != 2 {
			t.Errorf("turn = %+v, %v; want ended incomplete by replica-b", tr, err)
		}
	})
}

// TestFenceOfTheHolderPasses: writes under the current generation go
// through, and writes without a fence are not checked (the store's other
// callers).
func TestFenceOfTheHolderPasses(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.StartTurn(ctx, store.Turn{ID: "t", ConversationID: c.ID, Owner: "a", LeaseUntil: time.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		a := db.Fenced(store.Fence{TurnID: "t", Generation: 1})
		if err := a.AppendTurnEvents(ctx, "t", []store.TurnEvent{{Seq: 1, Data: json.RawMessage(`{}`)}}); err != nil {
			t.Errorf("events under the holder's fence: %v", err)
		}
		var many []store.TurnEvent
		for seq := int64(2); seq < 2+maxEventBatch+10; seq++ {
			many = append(many, store.TurnEvent{Seq: seq, Data: json.RawMessage(`{}`)})
		}
		if err := a.AppendTurnEvents(ctx, "t", many); err != nil {
			t.Errorf("more events than one statement holds, under the holder's fence: %v", err)
		}
		if evs, err := db.TurnEvents(ctx, "t", 0, 1000); err != nil || len(evs) != 1+len(many) {
			t.Errorf("log = %d events (%v), want %d", len(evs), err, 1+len(many))
		}
		if _, err := a.AppendMessage(ctx, store.Message{ID: "m", ConversationID: c.ID, Role: store.RoleAssistant, Content: json.RawMessage(`[]`)}); err != nil {
			t.Errorf("answer under the holder's fence: %v", err)
		}
		if err := a.UpdateMessage(ctx, store.Message{ID: "m", ConversationID: c.ID, Role: store.RoleAssistant, Content: json.RawMessage(`[]`)}); err != nil {
			t.Errorf("answer update under the holder's fence: %v", err)
		}
		if err := a.UpdateTitle(ctx, c.ID, "named"); err != nil {
			t.Errorf("title under the holder's fence: %v", err)
		}
		if err := a.UpdateTitle(ctx, "no-such-conversation", "named"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("title of a missing conversation under the holder's fence: %v, want ErrNotFound", err)
		}
		if _, err := a.AppendMessage(ctx, store.Message{ID: "cut", ConversationID: c.ID, Role: store.RoleUser, Content: textContent("edit me")}); err != nil {
			t.Fatal(err)
		}
		if n, err := a.TruncateConversation(ctx, c.ID, "cut"); n != 1 || err != nil {
			t.Errorf("truncate under the holder's fence = %d, %v; want 1", n, err)
		}
		if ok, err := a.EndTurn(ctx, "t", "a", store.TurnDone); !ok || err != nil {
			t.Errorf("end under the holder's fence: %v, %v", ok, err)
		}
		// Ended: the fence no longer holds, but unfenced writes still go.
		if err := a.AppendTurnEvents(ctx, "t", []store.TurnEvent{{Seq: 1000, Data: json.RawMessage(`{}`)}}); !errors.Is(err, store.ErrFenced) {
			t.Errorf("events after the end = %v, want ErrFenced", err)
		}
		if err := db.UpdateMessage(ctx, store.Message{ID: "m", ConversationID: c.ID, Role: store.RoleAssistant, Content: json.RawMessage(`[]`)}); err != nil {
			t.Errorf("unfenced update: %v", err)
		}
		if err := db.UpdateTitle(ctx, c.ID, "renamed"); err != nil {
			t.Errorf("unfenced title: %v", err)
		}
		if got, err := db.GetConversation(ctx, c.ID); err != nil || got.Title != "renamed" || len(got.Messages) != 1 {
			t.Errorf("conversation = %q with %d messages (%v), want \"renamed\" with the answer", got.Title, len(got.Messages), err)
		}
	})
}

// BenchmarkTurnWrites measures what the fence adds to a turn's writes: many
// turns at once, each appending one event and updating its answer per
// iteration, with and without a fence in the context.
//
//	go test -run '^$' -bench TurnWrites -count 3 ./internal/store/sqlstore/
func BenchmarkTurnWrites(b *testing.B) {
	for _, be := range testBackends {
		for _, fenced := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/fence=%v", be.name, fenced), func(b *testing.B) {
				db := openDB(b, be.newDSN(b))
				ctx := context.Background()
				var n atomic.Int64
				b.SetParallelism(16) // × GOMAXPROCS turns
				b.RunParallel(func(pb *testing.PB) {
					c, err := db.CreateConversation(ctx, store.Conversation{Title: "bench"})
					if err != nil {
						b.Error(err)
						return
					}
					id := fmt.Sprintf("turn-%d", n.Add(1))
					claimed, err := db.StartTurn(ctx, store.Turn{ID: id, ConversationID: c.ID, Owner: "a", LeaseUntil: time.Now().Add(time.Hour)})
					if err != nil {
						b.Error(err)
						return
					}
					var tctx store.TurnWrites = db // unfenced writes
					if fenced {
						tctx = db.Fenced(store.Fence{TurnID: id, Generation: claimed.Generation})
					}
					m, err := tctx.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant, Content: json.RawMessage(`[]`)})
					if err != nil {
						b.Error(err)
						return
					}
					for seq := int64(1); pb.Next(); seq++ {
						if err := tctx.AppendTurnEvents(ctx, id, []store.TurnEvent{{Seq: seq, Data: json.RawMessage(`{"type":"text_delta","text":"x"}`)}}); err != nil {
							b.Error(err)
							return
						}
						if err := tctx.UpdateMessage(ctx, m); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
