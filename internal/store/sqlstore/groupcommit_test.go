package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
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

// A batch runs once when every write succeeds or is refused by its fence
// (nothing written), and again, each write in a savepoint, when a write
// fails after writing: that write's rows are undone and its error is its
// own, the others are committed. The first run stops at the failing write,
// so the writes before it run twice.
func TestAppenderRunsABatchAgainOnlyWhenAWriteFails(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.SQLite))
	ctx := context.Background()
	conv := newConversation(t, db)
	if _, err := db.StartTurn(ctx, store.Turn{ID: "ended", ConversationID: conv, Owner: "me"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EndTurn(ctx, "ended", "me", store.TurnDone); err != nil {
		t.Fatal(err)
	}
	stale := &store.Fence{TurnID: "ended", Generation: 1}
	boom := errors.New("boom")
	type write struct {
		fence *store.Fence
		fail  bool // writes its row, then fails
	}
	stored := func(id string) bool {
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM conversations WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	for _, tc := range []struct {
		name   string
		writes []write
	}{
		{"all succeed", []write{{}, {}, {}}},
		{"one fenced", []write{{}, {fence: stale}, {}}},
		{"one fails after writing", []write{{}, {fail: true}, {}}},
		{"fenced and failing", []write{{fence: stale}, {}, {fail: true}, {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := make([]int, len(tc.writes))
			batch := make([]*appendReq, len(tc.writes))
			for i, w := range tc.writes {
				title := fmt.Sprintf("%s %d", tc.name, i)
				batch[i] = &appendReq{call: newCall(ctx), op: "test write", fence: w.fence,
					run: func(ctx context.Context, tx *sql.Tx) error {
						runs[i]++
						if _, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, title, created_at, updated_at) VALUES ($1, $1, '', '')`, title); err != nil {
							return err
						}
						if w.fail {
							return boom
						}
						return nil
					}}
			}
			before := db.appends.commits.Load()
			db.appends.commit(batch)
			if n := db.appends.commits.Load() - before; n != 1 {
				t.Errorf("%d commits, want 1", n)
			}
			failing := slices.IndexFunc(tc.writes, func(w write) bool { return w.fail })
			for i, w := range tc.writes {
				err := <-batch[i].err
				kept := stored(fmt.Sprintf("%s %d", tc.name, i))
				switch {
				case w.fence != nil:
					if !errors.Is(err, store.ErrFenced) || runs[i] != 0 || kept {
						t.Errorf("fenced write %d: %v, ran %d times, stored %v", i, err, runs[i], kept)
					}
				case w.fail:
					if !errors.Is(err, boom) || kept {
						t.Errorf("failing write %d: %v, stored %v", i, err, kept)
					}
				default:
					want := 1
					if i < failing {
						want = 2
					}
					if err != nil || !kept || runs[i] != want {
						t.Errorf("write %d: %v, stored %v, ran %d times, want %d", i, err, kept, runs[i], want)
					}
				}
			}
		})
	}
}
