package sqlstore

import (
	"context"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

// BenchmarkConcurrentAppends appends user messages from 64 goroutines at
// once, each to its own conversation, as a burst of chat turns does.
func BenchmarkConcurrentAppends(b *testing.B) {
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
				for pb.Next() {
					if _, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent("hello")}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
