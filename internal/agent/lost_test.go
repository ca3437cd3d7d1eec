package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

func encodeAll(t *testing.T, evs ...agent.Event) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, ev := range evs {
		data, err := agent.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// CloseLost marks a lost turn's answer incomplete with TURN_LOST, keeping
// the longer of what was saved and what the log holds, and returns the
// events closing the log; a log that already ended needs no closing.
func TestCloseLost(t *testing.T) {
	start := agent.MessageStart{MessageID: "m1"}
	for _, tc := range []struct {
		name    string
		saved   []llm.Block // the answer saved before the replica stopped
		logged  []agent.Event
		closing []string // the closing events' types
		want    []llm.Block
	}{
		{name: "nothing saved", logged: []agent.Event{start, agent.TextDelta{Content: "Working"}},
			closing: []string{"error", "message_end"}, want: []llm.Block{llm.Text("Working")}},
		{name: "the log went further", saved: []llm.Block{llm.Text("Wo")},
			logged:  []agent.Event{start, agent.TextDelta{Content: "Working"}},
			closing: []string{"error", "message_end"}, want: []llm.Block{llm.Text("Working")}},
		{name: "the save went further", saved: []llm.Block{llm.Text("Working on it")},
			logged:  []agent.Event{start, agent.TextDelta{Content: "Wo"}},
			closing: []string{"error", "message_end"}, want: []llm.Block{llm.Text("Working on it")}},
		{name: "the log ended", saved: []llm.Block{llm.Text("Done")},
			logged: []agent.Event{start, agent.TextDelta{Content: "Done"}, agent.MessageEnd{MessageID: "m1", StopReason: agent.StopEndTurn}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := openStore(t, backends[0])
			conv := newConversation(t, db)
			if tc.saved != nil {
				content, _ := llm.MarshalBlocks(tc.saved)
				if _, err := db.AppendMessage(ctx, store.Message{ID: "m1", ConversationID: conv, Role: store.RoleAssistant, Content: content}); err != nil {
					t.Fatal(err)
				}
			}
			a := newAgent(t, agent.Config{Store: db, Registry: tool.NewRegistry()})
			closing, err := a.CloseLost(ctx, store.Fence{}, conv, encodeAll(t, tc.logged...))
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, ev := range closing {
				types = append(types, string(ev.EventType()))
			}
			if len(types) != len(tc.closing) || len(types) > 0 && (types[0] != tc.closing[0] || types[1] != tc.closing[1]) {
				t.Fatalf("closing events %v, want %v", types, tc.closing)
			}
			msgs, blocks := storedBlocks(t, db, conv)
			if tc.closing == nil {
				if len(msgs) != 1 || msgs[0].Incomplete {
					t.Errorf("an ended turn's answer was changed: %+v", msgs)
				}
				return
			}
			if len(msgs) != 1 || !msgs[0].Incomplete || msgs[0].Error == nil || msgs[0].Error.Code != agent.CodeTurnLost {
				t.Fatalf("the lost answer = %+v, want incomplete with %s", msgs, agent.CodeTurnLost)
			}
			if len(blocks[0]) != len(tc.want) || blocks[0][0].Text != tc.want[0].Text {
				t.Errorf("the lost answer's content = %+v, want %+v", blocks[0], tc.want)
			}
		})
	}
}

// A closer that itself lost the turn (a later take-over) writes nothing.
func TestCloseLostIsFenced(t *testing.T) {
	ctx := context.Background()
	db := openStore(t, backends[0])
	conv := newConversation(t, db)
	if _, err := db.StartTurn(ctx, store.Turn{ID: "t1", ConversationID: conv, Owner: "a", LeaseUntil: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TakeOverTurns(ctx, time.Now(), conv, "b", time.Now().Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, agent.Config{Store: db, Registry: tool.NewRegistry()})
	stale := store.Fence{TurnID: "t1", Generation: 1}
	_, err := a.CloseLost(ctx, stale, conv, encodeAll(t, agent.MessageStart{MessageID: "m1"}, agent.TextDelta{Content: "x"}))
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("CloseLost under a stale fence = %v, want store.ErrFenced", err)
	}
	if msgs, _ := storedBlocks(t, db, conv); len(msgs) != 0 {
		t.Errorf("a fenced closer wrote %+v", msgs)
	}
}
