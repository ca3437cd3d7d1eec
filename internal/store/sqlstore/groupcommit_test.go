package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

// On every engine, appends that arrive together share commits (one WAL
// flush or fsync for many: a transaction on SQLite, a statement on
// PostgreSQL), including appends of two
// processes to the same conversations: nothing is lost, each caller's
// messages keep their order, and batches never deadlock on each other.
func TestGroupCommitOnEveryEngine(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.newDSN(t)
			dbs := []*DB{openDB(t, dsn), openDB(t, dsn)}
			for _, db := range dbs {
				if db.appends == nil && db.messages == nil {
					t.Fatal("appends are not group-committed")
				}
			}
			ctx := context.Background()
			var convs []string
			for i := range 6 {
				c, err := dbs[0].CreateConversation(ctx, store.Conversation{Title: fmt.Sprint("c", i)})
				if err != nil {
					t.Fatal(err)
				}
				convs = append(convs, c.ID)
			}
			const callers, perCaller = 48, 5
			var wg sync.WaitGroup
			errs := make(chan error, callers*perCaller)
			for w := range callers {
				wg.Go(func() {
					db, conv := dbs[w%2], convs[w%len(convs)]
					for k := range perCaller {
						m := store.Message{ConversationID: conv, Role: store.RoleUser, Content: textContent(fmt.Sprintf("w%d-%d", w, k))}
						if _, err := db.AppendMessage(ctx, m); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("append failed: %v", err)
			}
			total := 0
			for _, id := range convs {
				c, err := dbs[0].GetConversation(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				total += len(c.Messages)
				next := map[string]int{} // each caller's next k
				for _, m := range c.Messages {
					var w, k int
					text := string(m.Content)
					if _, err := fmt.Sscanf(text[strings.Index(text, `"w`)+2:], "%d-%d", &w, &k); err != nil {
						t.Fatalf("message %s: %v", text, err)
					}
					if key := fmt.Sprint(w); k != next[key] {
						t.Errorf("caller %d: message %d stored where %d was due", w, k, next[key])
					} else {
						next[key]++
					}
				}
			}
			if total != callers*perCaller {
				t.Errorf("%d messages stored, want %d", total, callers*perCaller)
			}
			commits := messageCommits(dbs[0]) + messageCommits(dbs[1])
			t.Logf("%d appends in %d transactions", callers*perCaller, commits)
			if commits >= callers*perCaller {
				t.Errorf("%d appends took %d transactions: none were grouped", callers*perCaller, commits)
			}
		})
	}
}
