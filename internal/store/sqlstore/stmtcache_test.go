package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// On SQLite every statement of a chat turn's writes is prepared when the
// store opens, and the turn's writes run through them, in and out of
// transactions, on the single writer connection (a statement prepared lazily
// there would wait for the connection its own transaction holds).
func TestTurnWritesUsePreparedStatements(t *testing.T) {
	for _, dsn := range []string{storetest.DSN(t, storetest.SQLite), ":memory:"} {
		db := openDB(t, dsn)
		if len(db.wstmts) != len(writeStmts) {
			t.Fatalf("%s: %d statements prepared, want %d", dsn, len(db.wstmts), len(writeStmts))
		}
		ctx := context.Background()
		conv, err := db.CreateConversation(ctx, store.Conversation{ID: "c1", Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.StartTurn(ctx, store.Turn{ID: "t1", ConversationID: conv.ID, Owner: "me"}); err != nil {
			t.Fatal(err)
		}
		msg := store.Message{ID: "m1", ConversationID: conv.ID, Role: store.RoleAssistant, Content: []byte(`[]`)}
		if _, err := db.AppendMessage(ctx, msg); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppendMessage(ctx, msg); !errors.Is(err, store.ErrConflict) {
			t.Errorf("appending m1 again = %v, want ErrConflict", err)
		}
		msg.Content = []byte(`[{"type":"text","text":"hi"}]`)
		if err := db.UpdateMessage(ctx, msg); err != nil {
			t.Fatal(err)
		}
		evs := []store.TurnEvent{{Seq: 1, Data: []byte(`{"type":"message_start"}`)}, {Seq: 2, Data: []byte(`{"type":"message_end"}`)}}
		if err := db.AppendTurnEvents(ctx, "t1", evs); err != nil {
			t.Fatal(err)
		}
		if err := db.AppendTurnEvents(ctx, "t1", evs[1:]); !errors.Is(err, store.ErrConflict) {
			t.Errorf("appending seq 2 again = %v, want ErrConflict", err)
		}
		if ended, err := db.EndTurn(ctx, "t1", "me", store.TurnDone); err != nil || !ended {
			t.Fatalf("EndTurn = %v, %v", ended, err)
		}
		got, err := db.GetConversation(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 1 || string(got.Messages[0].Content) != string(msg.Content) {
			t.Errorf("%s: messages = %+v", dsn, got.Messages)
		}
		logged, err := db.TurnEvents(ctx, "t1", 0, 10)
		if err != nil || len(logged) != 2 {
			t.Errorf("%s: logged events = %v, %v", dsn, logged, err)
		}
	}
}

// PostgreSQL keeps none: pgx caches prepared statements per connection.
func TestPostgresPreparesNothingItself(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.Postgres))
	if len(db.wstmts) != 0 {
		t.Errorf("%d statements prepared on PostgreSQL", len(db.wstmts))
	}
}

// On SQLite a turn's writes after its claim (answer updates, event logs)
// share transactions with other turns' writes, and one failing (an unknown
// message, a logged seq) fails only itself: every other write is stored.
func TestSQLiteTurnWritesAreGroupCommitted(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.SQLite))
	ctx := context.Background()
	const turns = 40
	for i := range turns {
		c, err := db.CreateConversation(ctx, store.Conversation{ID: fmt.Sprint("c", i), Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppendMessage(ctx, store.Message{ID: fmt.Sprint("m", i), ConversationID: c.ID, Role: store.RoleAssistant, Content: []byte(`[]`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.StartTurn(ctx, store.Turn{ID: fmt.Sprint("t", i), ConversationID: c.ID, Owner: "me"}); err != nil {
			t.Fatal(err)
		}
		if err := db.AppendTurnEvents(ctx, fmt.Sprint("t", i), []store.TurnEvent{{Seq: 1, Data: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	before := db.appends.commits.Load()
	var wg sync.WaitGroup
	errs := make([]error, 4*turns)
	for i := range turns {
		wg.Go(func() {
			content := []byte(fmt.Sprintf(`[{"type":"text","text":"answer %d"}]`, i))
			errs[4*i] = db.UpdateMessage(ctx, store.Message{ID: fmt.Sprint("m", i), Role: store.RoleAssistant, Content: content})
		})
		wg.Go(func() {
			errs[4*i+1] = db.AppendTurnEvents(ctx, fmt.Sprint("t", i), []store.TurnEvent{{Seq: 2, Data: []byte(`{"n":2}`)}, {Seq: 3, Data: []byte(`{"n":3}`)}})
		})
		wg.Go(func() { // fails: no such message
			errs[4*i+2] = db.UpdateMessage(ctx, store.Message{ID: fmt.Sprint("missing", i), Role: store.RoleAssistant, Content: []byte(`[]`)})
		})
		wg.Go(func() { // fails: seq 1 is logged
			errs[4*i+3] = db.AppendTurnEvents(ctx, fmt.Sprint("t", i), []store.TurnEvent{{Seq: 1, Data: []byte(`{}`)}})
		})
	}
	wg.Wait()
	for i := range turns {
		if errs[4*i] != nil || errs[4*i+1] != nil {
			t.Fatalf("turn %d: update %v, events %v", i, errs[4*i], errs[4*i+1])
		}
		if !errors.Is(errs[4*i+2], store.ErrNotFound) || !errors.Is(errs[4*i+3], store.ErrConflict) {
			t.Fatalf("turn %d: bad writes gave %v and %v, want ErrNotFound and ErrConflict", i, errs[4*i+2], errs[4*i+3])
		}
		c, err := db.GetConversation(ctx, fmt.Sprint("c", i))
		if err != nil || len(c.Messages) != 1 || !strings.Contains(string(c.Messages[0].Content), fmt.Sprintf("answer %d", i)) {
			t.Fatalf("turn %d: stored %+v, %v", i, c.Messages, err)
		}
		evs, err := db.TurnEvents(ctx, fmt.Sprint("t", i), 0, 10)
		if err != nil || len(evs) != 3 {
			t.Fatalf("turn %d: logged %d events, %v", i, len(evs), err)
		}
	}
	// The group commits counted every write's transaction, and fewer
	// transactions than writes ran.
	if n := db.appends.commits.Load() - before; n == 0 || n >= 4*turns {
		t.Errorf("%d group commits for %d writes", n, 4*turns)
	}
}

// On SQLite the reads of a search's shown tracks are prepared on first use
// and kept, up to readStmtsMax texts (the IN lists' lengths vary); past
// that, and on PostgreSQL, they run unprepared with the same results. A
// conversation's read goes through a statement prepared when the store
// opens, so a full cache does not leave it unprepared.
func TestReadsUsePreparedStatements(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, storetest.DSN(t, storetest.SQLite))
	if got := len(db.rstmts.m); got != len(openReadStmts) {
		t.Fatalf("%d read statements prepared at open, want %d", got, len(openReadStmts))
	}
	var recs []store.IndexRecord
	var isrcs []string
	for i := range readStmtsMax + 10 {
		isrc := fmt.Sprintf("ISRC%04d", i)
		isrcs = append(isrcs, isrc)
		recs = append(recs, store.IndexRecord{ISRC: isrc, Title: "title " + isrc})
	}
	if err := db.UpsertIndex(ctx, recs); err != nil {
		t.Fatal(err)
	}
	// Every length of IN list, twice: the second round reuses the
	// statements, and lengths past the cache's room run unprepared.
	for round := range 2 {
		for n := 1; n <= len(isrcs); n++ {
			got, err := db.GetIndexContent(ctx, isrcs[:n])
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n || got[n-1].ISRC != isrcs[n-1] || got[n-1].Title != "title "+isrcs[n-1] {
				t.Fatalf("round %d: GetIndexContent of %d = %d records, last %+v", round, n, len(got), got[len(got)-1])
			}
		}
	}
	if got := len(db.rstmts.m); got != readStmtsMax {
		t.Errorf("%d read statements kept, want the bound %d", got, readStmtsMax)
	}

	conv, err := db.CreateConversation(ctx, store.Conversation{ID: "c1", Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendMessage(ctx, store.Message{ID: "m1", ConversationID: conv.ID, Role: store.RoleUser, Content: []byte(`[{"type":"text","text":"hi"}]`)}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := db.GetConversation(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != "t" || len(got.Messages) != 1 || got.Messages[0].ID != "m1" {
			t.Errorf("GetConversation = %+v", got)
		}
	}
	if _, err := db.GetConversation(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetConversation of a missing id = %v, want ErrNotFound", err)
	}
}
