package sqlstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// BenchmarkUpdateTitle renames one conversation among n others on SQLite,
// as a new conversation's first turn does: the cost must not grow with n
// (it did: its full-text entry was found by a scan of every title, until
// migration 0013).
//
//	go test -run '^$' -bench UpdateTitle -benchtime 200x ./internal/store/sqlstore/
func BenchmarkUpdateTitle(b *testing.B) {
	for _, n := range []int{1000, 50000} {
		b.Run(fmt.Sprint("conversations=", n), func(b *testing.B) {
			db := openDB(b, storetest.DSN(b, storetest.SQLite))
			ctx := context.Background()
			// The others, in one transaction: CreateConversation would take
			// a commit each.
			tx, err := db.w.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if _, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, title, created_at, updated_at) VALUES ($1, $2, $3, $3)`,
					fmt.Sprint("c", i), fmt.Sprint("calm piano, conversation ", i), "2026-11-28T00:00:00Z"); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			c, err := db.CreateConversation(ctx, store.Conversation{})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				if err := db.UpdateTitle(ctx, c.ID, fmt.Sprint("a title ", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
