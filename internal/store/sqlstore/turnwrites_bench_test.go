package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/toolport/toolport/internal/store"
)

// BenchmarkBurstTurns makes a chat turn's writes from 64 goroutines at
// once, each in its own conversation, as a burst of turns does: the claim,
// the user message and the first event (what a client waits for before its
// first event), then the answer and the turn's end. One op is one turn.
func BenchmarkBurstTurns(b *testing.B) {
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			db := openDB(b, be.newDSN(b))
			ctx := context.Background()
			b.SetParallelism(32) // × GOMAXPROCS goroutines
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				c, err := db.CreateConversation(ctx, store.Conversation{Title: "bench"})
				if err != nil {
					b.Error(err)
					return
				}
				ev := []store.TurnEvent{{Seq: 1, Data: []byte(`{"type":"message_start"}`)}}
				for pb.Next() {
					t, err := db.StartTurn(ctx, store.Turn{ID: uuid.NewString(), ConversationID: c.ID, Owner: "bench", LeaseUntil: time.Now().Add(time.Minute)})
					if err != nil {
						b.Error(err)
						return
					}
					fctx := store.WithFence(ctx, store.Fence{TurnID: t.ID, Generation: t.Generation})
					if _, err := db.AppendMessage(fctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent("calm piano please")}); err != nil {
						b.Error(err)
						return
					}
					if err := db.AppendTurnEvents(fctx, t.ID, ev); err != nil {
						b.Error(err)
						return
					}
					if _, err := db.AppendMessage(fctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant, Content: textContent("The calmest is a slow piano piece.")}); err != nil {
						b.Error(err)
						return
					}
					if _, err := db.EndTurn(fctx, t.ID, "bench", store.TurnDone); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
