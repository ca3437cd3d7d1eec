package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server/servertest"
)

// TestNextMessageRightAfterMessageEnd: a client may send its next message as
// soon as it reads message_end, which is logged and streamed before the
// turn's owner marks the turn ended. That message is accepted (no 409),
// whether it reaches the replica that ran the turn or another one.
func TestNextMessageRightAfterMessageEnd(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		const rounds = 40
		var turns []servertest.Turn
		for i := range rounds {
			turns = append(turns, servertest.Turn{Events: []servertest.Event{servertest.Text(fmt.Sprintf("answer %d", i))}})
		}
		a, b := replicas(t, engine, 5*time.Second, turns...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		id := a.newConversation(t)
		for i := range rounds {
			e := a
			if i%2 == 1 {
				e = b
			}
			s := e.chat(t, ctx, id, fmt.Sprintf("message %d", i), nil)
			if s.status != http.StatusOK {
				t.Fatalf("message %d: %d %s", i, s.status, s.raw)
			}
		}
	})
}
