package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

type originOut struct{}

func (originOut) Summary() string { return "noted" }

// TestToolCallsCarryTheirOrigin checks that each tool call's context names
// the conversation, the assistant message being written and the tool call,
// so that a tool storing what it makes (suggestPlaylist) can tie it to the
// turn.
func TestToolCallsCarryTheirOrigin(t *testing.T) {
	var mu sync.Mutex
	var seen []store.Origin
	reg := tool.NewRegistry()
	if err := reg.Register(tool.Must(tool.New(tool.Spec{Name: "note", Description: "Notes where it runs.", Pack: "test"},
		func(ctx context.Context, in queryIn) (originOut, error) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, store.OriginFrom(ctx))
			return originOut{}, nil
		}))); err != nil {
		t.Fatal(err)
	}
	ms := servertest.NewModelServer(t,
		servertest.Turn{Match: "note it", Events: []servertest.Event{
			servertest.Call("call_a", "note", `{"query":"a"}`), servertest.Call("call_b", "note", `{"query":"b"}`)}},
		servertest.Turn{Match: "note it", Step: 1, Events: []servertest.Event{servertest.Text("Done.")}})
	db := openStore(t, store.EngineSQLite)
	a := newAgent(t, agent.Config{Store: db, Registry: reg, Provider: provider(t, "anthropic", ms)})
	conv := newConversation(t, db)
	r := &recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Turn(ctx, store.Fence{}, conv, "note it", r.emit); err != nil {
		t.Fatal(err)
	}
	msgID := r.first("message_start")["messageId"]
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("%d calls", len(seen))
	}
	calls := map[string]bool{}
	for _, o := range seen {
		if o.ConversationID != conv || o.MessageID != msgID {
			t.Errorf("origin %+v, want conversation %s and message %v", o, conv, msgID)
		}
		calls[o.ToolCallID] = true
	}
	if !calls["call_a"] || !calls["call_b"] {
		t.Errorf("tool call ids %v", calls)
	}
	msgs, _ := storedBlocks(t, db, conv)
	if len(msgs) != 2 || msgs[1].ID != msgID {
		t.Errorf("the stored assistant message is not the one the origin named: %+v", msgs)
	}
}
