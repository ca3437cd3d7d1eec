package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/internal/turn/turntest"
)

// crashingStore is a replica's store that refuses the answer's saves once
// the replica "dies", as a killed process saves nothing: without it, the
// canceled agent of a replica killed in-process would save its partial
// answer itself (on SQLite, whose handle the other replica shares).
type crashingStore struct {
	server.Store
	dead atomic.Bool
}

var errCrashed = errors.New("the replica crashed")

func (s *crashingStore) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	if s.dead.Load() {
		return store.Message{}, errCrashed
	}
	return s.Store.AppendMessage(ctx, m)
}

func (s *crashingStore) UpdateMessage(ctx context.Context, m store.Message) error {
	if s.dead.Load() {
		return errCrashed
	}
	return s.Store.UpdateMessage(ctx, m)
}

// Fenced refuses the answer's fenced saves too: the turn's saves are made
// under its fence.
func (s *crashingStore) Fenced(f store.Fence) store.TurnWrites {
	return crashingWrites{s.Store.Fenced(f), &s.dead}
}

type crashingWrites struct {
	store.TurnWrites
	dead *atomic.Bool
}

func (w crashingWrites) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	if w.dead.Load() {
		return store.Message{}, errCrashed
	}
	return w.TurnWrites.AppendMessage(ctx, m)
}

func (w crashingWrites) UpdateMessage(ctx context.Context, m store.Message) error {
	if w.dead.Load() {
		return errCrashed
	}
	return w.TurnWrites.UpdateMessage(ctx, m)
}

// A replica that dies mid-turn has streamed text it never saved (the agent
// saves after each tool round and at the end); the replica taking the turn
// over keeps it, rebuilt from the turn's log, after what was saved.
func TestLostTurnKeepsItsStreamedAnswer(t *testing.T) {
	cases := []struct {
		name, ask string
		// saved is the answer's blocks stored before the replica died;
		// want those kept after the take-over.
		saved, want []llm.Block
	}{
		{
			name: "before any save", ask: "just text",
			want: []llm.Block{llm.Text("Working on it")},
		},
		{
			name: "after a tool round", ask: "look it up",
			saved: []llm.Block{llm.Text("Let me look. "), llm.ToolUse("c1", "lookup", nil), llm.ToolResult("c1", nil, false)},
			want:  []llm.Block{llm.Text("Let me look. "), llm.ToolUse("c1", "lookup", nil), llm.ToolResult("c1", nil, false), llm.Text("Found it")},
		},
	}
	turns := []servertest.Turn{
		{Match: "just text", Events: []servertest.Event{servertest.Text("Working "), servertest.Text("on it"), servertest.Pause(time.Hour)}},
		{Match: "look it up", Events: []servertest.Event{servertest.Text("Let me look. "), servertest.Call("c1", "lookup", `{"query":"x"}`)}},
		{Match: "look it up", Step: 1, Events: []servertest.Event{servertest.Text("Found it"), servertest.Pause(time.Hour)}},
	}
	eachEngine(t, func(t *testing.T, engine string) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				const lease = time.Minute
				clock := turntest.NewClock(time.Now())
				dsn := storetest.DSN(t, engine)
				model := servertest.NewModelServer(t, turns...)
				crash := &crashingStore{}
				a := newEnv(t, envOptions{dsn: dsn, model: model, clock: clock, config: func(c *server.Config) {
					c.TurnLease = lease
					crash.Store = c.Store
					c.Store = crash
				}})
				ob := envOptions{dsn: dsn, model: model, clock: clock, config: func(c *server.Config) { c.TurnLease = lease }}
				if engine == storetest.SQLite {
					ob.db = a.db
				}
				b := newEnv(t, ob)
				conv := a.newConversation(t)
				last := tc.want[len(tc.want)-1].Text

				// The turn runs on a until the client has seen its last text,
				// which is then in the log (clients get only logged events).
				seen := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					var text string
					a.chat(t, context.Background(), conv, tc.ask, func(ev map[string]any) bool {
						if ev["type"] == "text_delta" {
							text += ev["content"].(string)
							if len(text) >= len(last) && text[len(text)-len(last):] == last {
								close(seen)
							}
						}
						return true
					})
				}()
				select {
				case <-seen:
				case <-time.After(20 * time.Second):
					t.Fatal("the turn never streamed its text")
				}
				running, err := b.db.RunningTurn(context.Background(), conv)
				if err != nil {
					t.Fatal(err)
				}
				if got := answerBlocks(t, b, conv); !sameBlocks(got, tc.saved) {
					t.Fatalf("answer saved before the crash = %+v, want %+v", got, tc.saved)
				}

				crash.dead.Store(true)
				if engine == storetest.Postgres {
					a.db.Close()
				}
				a.srv.Kill()

				// b's sweeper takes the turn over once its lease lapses: its
				// passes run inside Advance, the one at 1.5 leases the first
				// after the lapse.
				clock.Advance(lease / 2)
				if tr, err := b.db.GetTurn(context.Background(), running.ID); err != nil || tr.State != store.TurnRunning {
					t.Fatalf("the turn before its lease lapsed = %+v, %v; want running", tr, err)
				}
				clock.Advance(lease)
				if tr, err := b.db.GetTurn(context.Background(), running.ID); err != nil || tr.State != store.TurnIncomplete {
					t.Fatalf("the lost turn after the sweeper's pass = %+v, %v; want incomplete", tr, err)
				}
				// The dead replica's stream ends once the turn is closed.
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("the dead replica's stream did not end after the turn was closed")
				}
				c, err := b.db.GetConversation(context.Background(), conv)
				if err != nil || len(c.Messages) != 2 {
					t.Fatalf("messages = %+v, %v", c.Messages, err)
				}
				m := c.Messages[1]
				if m.Role != store.RoleAssistant || !m.Incomplete || m.Error == nil || m.Error.Code != "TURN_LOST" {
					t.Errorf("lost answer = %+v, want incomplete with TURN_LOST", m)
				}
				if got := answerBlocks(t, b, conv); !sameBlocks(got, tc.want) {
					t.Errorf("lost answer's content = %s, want %+v", m.Content, tc.want)
				}
			})
		}
	})
}

// answerBlocks is the content of conv's assistant message, nil when none.
func answerBlocks(t *testing.T, e *env, conv string) []llm.Block {
	t.Helper()
	c, err := e.db.GetConversation(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Messages {
		if m.Role == store.RoleAssistant {
			var blocks []llm.Block
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				t.Fatalf("answer content %s: %v", m.Content, err)
			}
			return blocks
		}
	}
	return nil
}

// sameBlocks compares blocks by type, text and the call each names; a
// tool_result's content is the tool's envelope, checked for success only.
func sameBlocks(got, want []llm.Block) bool {
	if len(got) != len(want) {
		return false
	}
	for i, g := range got {
		w := want[i]
		if g.Type != w.Type || g.Text != w.Text || g.ID != w.ID || g.Name != w.Name || g.ToolUseID != w.ToolUseID || g.IsError != w.IsError {
			return false
		}
		if g.Type == llm.BlockToolResult {
			var env struct{ Success bool }
			if json.Unmarshal(g.Content, &env) != nil || !env.Success {
				return false
			}
		}
	}
	return true
}
