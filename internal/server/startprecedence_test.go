package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
)

// While a turn is starting, a running turn hands on its first event but
// then waits, with its model call and its next events, up to
// StartPrecedence each time; once the start is done, it goes on.
func TestRunningTurnsWaitWhileATurnStarts(t *testing.T) {
	e := newEnv(t, envOptions{
		turns:  []servertest.Turn{{Match: "hello", Events: []servertest.Event{servertest.Text("Hi"), servertest.Text(" there.")}}},
		config: func(c *server.Config) { c.StartPrecedence = time.Minute },
	})
	conv := e.newConversation(t)
	release := e.srv.HoldTurnStart()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()

	got := make(chan *stream, 1)
	first := make(chan string, 16)
	go func() {
		got <- e.chat(t, context.Background(), conv, "hello", func(ev map[string]any) bool {
			typ, _ := ev["type"].(string)
			first <- typ
			return true
		})
	}()
	select {
	case typ := <-first:
		if typ != "message_start" {
			t.Fatalf("first event = %q, want message_start", typ)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn's first event did not come while another turn was starting")
	}
	select {
	case typ := <-first:
		t.Fatalf("event %q handed on while another turn was starting", typ)
	case <-time.After(300 * time.Millisecond):
	}
	// Nor did it do its work: the model call waits too, so that its CPU
	// goes to the turns still waiting for their first event.
	if n := len(e.model.Requests()); n != 0 {
		t.Fatalf("the model was called %d times while another turn was starting, want 0", n)
	}

	release()
	released = true
	select {
	case s := <-got:
		if end := s.first("message_end"); s.status != http.StatusOK || end == nil || end["stopReason"] != "end_turn" || s.first("text_delta") == nil {
			t.Errorf("after the start: %d %s", s.status, s.raw)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not go on once the other turn had started")
	}
}
