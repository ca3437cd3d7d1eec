package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// A replica that took over a lost turn appends its error and message_end
// before it ends the turn; a stream resumed on another replica in between
// must wait for them, not end with 204 and leave the client without the
// turn's end.
func TestResumeWaitsForALostTurnsClosingEvents(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		const lease = time.Minute // no sweeper expires the turn on its own
		a, b := replicas(t, engine, lease, slowTurn)
		conv := a.newConversation(t)
		tid, _ := startSlowTurn(t, a, conv)
		if engine == storetest.Postgres {
			a.db.Close()
		}
		a.srv.Kill()

		// A closer has taken the turn over and not yet appended its end.
		ctx := context.Background()
		later := time.Now().Add(lease + time.Second)
		lapsed, err := b.db.TakeOverTurns(ctx, later, conv, "closer", later.Add(lease), nil)
		if err != nil || len(lapsed) != 1 || lapsed[0].ID != tid {
			t.Fatalf("TakeOverTurns = %+v, %v", lapsed, err)
		}
		logged, err := b.db.TurnEvents(ctx, tid, 0, 100)
		if err != nil || len(logged) < 2 {
			t.Fatalf("logged events = %d, %v", len(logged), err)
		}
		last := logged[len(logged)-1].Seq

		done := make(chan *stream, 1)
		go func() {
			req, _ := http.NewRequest("GET", b.url+"/api/conversations/"+conv+"/turns/"+tid+"/events", nil)
			req.Header.Set("Last-Event-ID", tid+":"+strconv.FormatInt(last, 10))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("resume: %v", err)
				done <- nil
				return
			}
			defer res.Body.Close()
			done <- readStream(t, res, nil)
		}()
		select {
		case s := <-done:
			t.Fatalf("the resumed stream ended before the lost turn was closed: %+v", s)
		case <-time.After(time.Second):
		}

		var evs []store.TurnEvent
		for i, ev := range []map[string]any{
			{"type": "error", "code": "TURN_LOST", "message": "lost", "retryable": true},
			{"type": "message_end", "messageId": "", "stopReason": "error"},
		} {
			data, _ := json.Marshal(ev)
			evs = append(evs, store.TurnEvent{Seq: last + 1 + int64(i), Data: data})
		}
		if err := b.db.AppendTurnEvents(ctx, tid, evs); err != nil {
			t.Fatal(err)
		}
		if ok, err := b.db.EndTurn(ctx, tid, "closer", store.TurnIncomplete); !ok || err != nil {
			t.Fatalf("EndTurn = %v, %v", ok, err)
		}
		select {
		case s := <-done:
			if s == nil {
				return
			}
			if got := s.types(); s.status != http.StatusOK || len(got) != 2 || got[0] != "error" || got[1] != "message_end" {
				t.Errorf("resumed stream = %d %v %s, want the closing error and message_end", s.status, got, s.raw)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the resumed stream did not deliver the closing events")
		}
	})
}
