package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
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
					fctx := db.Fenced(store.Fence{TurnID: t.ID, Generation: t.Generation})
					if _, err := fctx.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent("calm piano please")}); err != nil {
						b.Error(err)
						return
					}
					if err := fctx.AppendTurnEvents(ctx, t.ID, ev); err != nil {
						b.Error(err)
						return
					}
					if _, err := fctx.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant, Content: textContent("The calmest is a slow piano piece.")}); err != nil {
						b.Error(err)
						return
					}
					if _, err := fctx.EndTurn(ctx, t.ID, "bench", store.TurnDone); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkMessageSearchEntry is why SQLite's messages write their own
// full-text entries and its batches take no savepoint per write (migration
// 0012): 64 messages a transaction on a bare schema of the messages and
// their FTS5 table, the entry written by a trigger, by its own statement,
// or by its own statement with a savepoint around each message. FTS5
// flushes its pending terms at every savepoint, a trigger's statement
// savepoint included. One op is one message.
//
//	go test -run '^$' -bench MessageSearchEntry -benchtime 12800x ./internal/store/sqlstore/
func BenchmarkMessageSearchEntry(b *testing.B) {
	const schema = `
CREATE TABLE conversations (id TEXT PRIMARY KEY, updated_at TEXT);
CREATE TABLE messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    content TEXT NOT NULL CHECK (json_valid(content) AND json_type(content) = 'array'));
CREATE VIRTUAL TABLE message_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 0');`
	const trigger = `CREATE TRIGGER message_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO message_fts (rowid, body) VALUES (new.seq, (
        SELECT substr(coalesce(group_concat(json_extract(b.value, '$.text'), char(10)), ''), 1, 65536)
        FROM json_each(new.content) AS b
        WHERE b.type = 'object' AND json_extract(b.value, '$.type') = 'text'));
END`
	const perTx = 64
	for _, mode := range []string{"trigger", "own statement", "own statement and savepoints"} {
		b.Run(mode, func(b *testing.B) {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "m.db")+
				"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			ddl := schema
			if mode == "trigger" {
				ddl += ";" + trigger
			}
			if _, err := db.Exec(ddl); err != nil {
				b.Fatal(err)
			}
			for i := range perTx {
				if _, err := db.Exec(`INSERT INTO conversations VALUES ($1, '')`, fmt.Sprint("c", i)); err != nil {
					b.Fatal(err)
				}
			}
			stmt := func(q string) *sql.Stmt {
				st, err := db.Prepare(q)
				if err != nil {
					b.Fatal(err)
				}
				return st
			}
			touch := stmt(qTouchConversation)
			insert := stmt(`INSERT INTO messages (id, conversation_id, content) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`)
			index := stmt(qIndexMessage)
			exec := func(tx *sql.Tx, st *sql.Stmt, args ...any) sql.Result {
				res, err := tx.Stmt(st).Exec(args...)
				if err != nil {
					b.Fatal(err)
				}
				return res
			}
			var tx *sql.Tx
			for n := 0; b.Loop(); n++ {
				i := n % perTx
				if i == 0 {
					if tx, err = db.Begin(); err != nil {
						b.Fatal(err)
					}
				}
				content := fmt.Sprintf(`[{"type":"text","text":"calm piano please, number %d of the melancholic set"}]`, n)
				if mode == "own statement and savepoints" {
					if _, err := tx.Exec(qSavepointAppend); err != nil {
						b.Fatal(err)
					}
				}
				exec(tx, touch, fmt.Sprint("c", i), "now")
				res := exec(tx, insert, fmt.Sprint("m", n), fmt.Sprint("c", i), content)
				if mode != "trigger" {
					seq, err := res.LastInsertId()
					if err != nil {
						b.Fatal(err)
					}
					exec(tx, index, seq, content)
				}
				if mode == "own statement and savepoints" {
					if _, err := tx.Exec(qReleaseAppend); err != nil {
						b.Fatal(err)
					}
				}
				if i == perTx-1 {
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
					tx = nil
				}
			}
			if tx != nil {
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
