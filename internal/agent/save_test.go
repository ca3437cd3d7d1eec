package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// slowSaves is a store whose first saves of assistant messages fail as a
// save does under a burst of turns: it waited in the store's queue past its
// deadline (context.DeadlineExceeded), or failed in a way the store does not
// classify (a busy database). Or, with refuse, the store refuses them for
// what they are. The other writes go through.
type slowSaves struct {
	*sqlstore.DB
	fail   int   // assistant saves that fail before the store answers again
	err    error // what they fail with
	refuse error // when set, every assistant save fails with it

	mu     sync.Mutex
	failed int
}

func (s *slowSaves) failure(m store.Message) error {
	if m.Role != store.RoleAssistant {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse != nil {
		return s.refuse
	}
	if s.failed < s.fail {
		s.failed++
		return fmt.Errorf("store: append message: %w", s.err)
	}
	return nil
}

func (s *slowSaves) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	if err := s.failure(m); err != nil {
		return store.Message{}, err
	}
	return s.DB.AppendMessage(ctx, m)
}

func (s *slowSaves) UpdateMessage(ctx context.Context, m store.Message) error {
	if err := s.failure(m); err != nil {
		return err
	}
	return s.DB.UpdateMessage(ctx, m)
}

// A save of the answer that fails for a while (under load, past its
// deadline in the store's queue) is tried again: the turn ends normally
// and its answer is stored whole, not lost with "the answer could not be
// saved". A save the store refuses for what it is is not tried again, and
// one that keeps failing is reported after a bounded number of tries.
func TestAnswerSaveIsRetried(t *testing.T) {
	busy := errors.New("database is locked (5) (SQLITE_BUSY)")
	cases := []struct {
		name      string
		fail      int
		err       error
		refuse    error
		wantError bool // the turn ends with "the answer could not be saved"
		wantTries int  // assistant saves the store was asked for, failed ones included
	}{
		{name: "past its deadline once", fail: 1, err: context.DeadlineExceeded, wantTries: 1},
		{name: "busy twice", fail: 2, err: busy, wantTries: 2},
		{name: "failing every time", fail: 1000, err: context.DeadlineExceeded, wantError: true, wantTries: 6},
		{name: "fenced", refuse: &store.FencedError{TurnID: "t", Generation: 1}, wantError: true},
		{name: "conversation gone", refuse: store.ErrNotFound, wantError: true},
	}
	for _, engine := range backends {
		for _, tc := range cases {
			t.Run(engine+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				db := &slowSaves{DB: openStore(t, engine), fail: tc.fail, err: tc.err, refuse: tc.refuse}
				ms := servertest.NewModelServer(t, servertest.Turn{Match: "hello", Events: []servertest.Event{
					servertest.Text("Hello "), servertest.Text("there."),
				}})
				var log strings.Builder
				a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: provider(t, "openai", ms),
					Logger: slog.New(slog.NewTextHandler(&log, nil))})
				conv := newConversation(t, db.DB)
				r := &recorder{}
				if err := a.Turn(context.Background(), store.Fence{}, conv, "hello", r.emit); err != nil {
					t.Fatalf("Turn: %v", err)
				}
				e := r.first("error")
				if got := e != nil && e["message"] == "the answer could not be saved"; got != tc.wantError {
					t.Fatalf("error event %v; want the save's error: %v\n%s", e, tc.wantError, log.String())
				}
				msgs, blocks := storedBlocks(t, db.DB, conv)
				if tc.wantError {
					if r.first("message_end")["stopReason"] != agent.StopError {
						t.Errorf("message_end = %v, want stop reason error", r.first("message_end"))
					}
					if tc.refuse == nil && !strings.Contains(log.String(), "attempts=3") {
						t.Errorf("the log does not say the save was tried 3 times:\n%s", log.String())
					}
					if db.failed != tc.wantTries {
						t.Errorf("%d saves failed, want %d (the answer's, then the failure's, 3 tries each)", db.failed, tc.wantTries)
					}
					return
				}
				if me := r.first("message_end"); me["stopReason"] != agent.StopEndTurn {
					t.Errorf("message_end = %v, want end_turn", me)
				}
				if len(msgs) != 2 || msgs[1].Role != store.RoleAssistant || msgs[1].Incomplete || msgs[1].Error != nil {
					t.Fatalf("stored %+v, want the user's message and the whole answer", msgs)
				}
				if len(blocks[1]) != 1 || blocks[1][0].Text != "Hello there." {
					t.Errorf("the stored answer = %+v, want %q", blocks[1], "Hello there.")
				}
				if db.failed != tc.wantTries {
					t.Errorf("%d saves failed, want %d", db.failed, tc.wantTries)
				}
			})
		}
	}
}
