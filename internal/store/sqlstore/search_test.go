package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
)

// TestSearchConversations pins what a search finds, alike on both engines.
func TestSearchConversations(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		conv := func(i int, title string, msgs ...json.RawMessage) string {
			t.Helper()
			c, err := db.CreateConversation(ctx, store.Conversation{Title: title,
				CreatedAt: t0.Add(time.Duration(i) * time.Minute), UpdatedAt: t0.Add(time.Duration(i) * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if _, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: m}); err != nil {
					t.Fatal(err)
				}
			}
			return c.ID
		}
		toolTurn := json.RawMessage(`[{"type":"text","text":"Let me look that up."},
			{"type":"tool_use","id":"tu_1","name":"web_search","input":{"query":"zanzibar ferries"}},
			{"type":"tool_result","tool_use_id":"tu_1","content":"{\"results\":[{\"title\":\"Quokka island\"}]}"}]`)
		hebrew := conv(0, "Music", textContent("אני מחפש שירים עצובים של אריק איינשטיין"))
		english := conv(1, "Trip planning", textContent("We were running late for the hotels in Lisbon."))
		tools := conv(2, "Research", toolTurn)
		titled := conv(3, "Jazz standards for a rainy day")
		gone := conv(4, "Lisbon again", textContent("Lisbon hotels once more"))
		if err := db.DeleteConversation(ctx, gone); err != nil {
			t.Fatal(err)
		}

		search := func(q string, opt store.ListOptions) ([]string, int) {
			t.Helper()
			page, err := db.SearchConversations(ctx, q, opt)
			if err != nil {
				t.Fatalf("search %q: %v", q, err)
			}
			ids := []string{}
			for _, c := range page.Conversations {
				ids = append(ids, c.ID)
			}
			return ids, page.Total
		}
		for _, tc := range []struct {
			name, q string
			want    []string
		}{
			{"Hebrew word in a message", "שירים", []string{hebrew}},
			{"Hebrew words, all required", "אריק עצובים", []string{hebrew}},
			{"Hebrew prefix", "איינש", []string{hebrew}},
			{"Hebrew word absent", "שלום", nil},
			{"English word, any case", "LISBON", []string{english}},
			{"prefix finds the longer word", "run", []string{english}},
			{"plural finds the plural", "hotels", []string{english}},
			{"prefix of a plural", "hotel", []string{english}},
			{"no stemming: runs does not find running", "runs", nil},
			{"no stop words dropped", "the hotels", []string{english}},
			{"every word is required", "lisbon jazz", nil},
			{"title words", "rainy jazz", []string{titled}},
			{"title and message across conversations", "l", []string{tools, english}},
			{"text blocks of a tool turn", "look", []string{tools}},
			{"tool call input is not searched", "zanzibar", nil},
			{"tool result is not searched", "quokka", nil},
			{"query syntax is only separators", `"lisbon" OR NOT* (hotels)`, nil},
			{"punctuation splits words", "late—hotels", []string{english}},
			{"deleted conversation not found", "again", nil},
		} {
			got, total := search(tc.q, store.ListOptions{})
			if tc.want == nil {
				tc.want = []string{}
			}
			if !reflect.DeepEqual(got, tc.want) || total != len(tc.want) {
				t.Errorf("%s: search %q = %v (total %d), want %v", tc.name, tc.q, got, total, tc.want)
			}
		}

		// Newest first and paged: an append moves a conversation up.
		if _, err := db.AppendMessage(ctx, store.Message{ConversationID: hebrew, Role: store.RoleAssistant,
			Content: textContent("Here is a list, לשיר ביחד.")}); err != nil {
			t.Fatal(err)
		}
		all, total := search("l", store.ListOptions{})
		if want := []string{hebrew, tools, english}; !reflect.DeepEqual(all, want) || total != 3 {
			t.Errorf("after append: %v (total %d), want %v", all, total, want)
		}
		if got, total := search("l", store.ListOptions{Limit: 2, Offset: 2}); !reflect.DeepEqual(got, all[2:]) || total != 3 {
			t.Errorf("second page: %v (total %d), want %v", got, total, all[2:])
		}

		// The index follows updates and renames.
		page, err := db.SearchConversations(ctx, "Jazz", store.ListOptions{})
		if err != nil || len(page.Conversations) != 1 {
			t.Fatalf("jazz: %v, %v", page, err)
		}
		if _, err := db.RenameConversation(ctx, titled, "Blues on Sunday"); err != nil {
			t.Fatal(err)
		}
		if got, _ := search("jazz", store.ListOptions{}); len(got) != 0 {
			t.Errorf("old title still found: %v", got)
		}
		if got, _ := search("sunday", store.ListOptions{}); !reflect.DeepEqual(got, []string{titled}) {
			t.Errorf("new title: %v", got)
		}
		c, _ := db.GetConversation(ctx, english)
		m := c.Messages[0]
		m.Content = textContent("Porto instead")
		if err := db.UpdateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		if got, _ := search("lisbon", store.ListOptions{}); len(got) != 0 {
			t.Errorf("replaced text still found: %v", got)
		}
		if got, _ := search("porto", store.ListOptions{}); !slices.Equal(got, []string{english}) {
			t.Errorf("updated text: %v", got)
		}
	})
}

func TestSearchConversationsRefuses(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		for name, q := range map[string]string{
			"empty":          "",
			"no word":        `"*() -- ;`,
			"too long":       strings.Repeat("a", store.MaxSearchQueryBytes+1),
			"too many words": strings.Repeat("a ", store.MaxSearchTerms+1),
			"invalid UTF-8":  "abc\xff",
			"only a mark":    "\u05b8",
		} {
			if _, err := db.SearchConversations(context.Background(), q, store.ListOptions{}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: err = %v, want ErrInvalid", name, err)
			}
		}
	})
}

// TestSearchIndexFollowsDeletes checks that SQLite's full-text tables hold
// one entry per message through updates and failed writes, and that
// deleting a conversation removes its entries too (the foreign-key cascade
// fires the messages' delete trigger), so the index does not grow with dead
// rows.
func TestSearchIndexFollowsDeletes(t *testing.T) {
	db := openDB(t, testBackends[0].newDSN(t))
	if db.Engine() != store.EngineSQLite {
		t.Fatalf("engine %s, want sqlite", db.Engine())
	}
	ctx := context.Background()
	c, err := db.CreateConversation(ctx, store.Conversation{Title: "doomed"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent("words")}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() (n int) {
		t.Helper()
		if err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM message_fts) + (SELECT count(*) FROM conversation_title_fts)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 4 {
		t.Fatalf("index rows before delete = %d, want 4", n)
	}
	// Updates replace a message's entry (written by the store, not a
	// trigger, since migration 0012); a failed append leaves none.
	got, err := db.GetConversation(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	m := got.Messages[1]
	for _, text := range []string{"changed", "changed again"} {
		m.Content = textContent(text)
		if err := db.UpdateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.AppendMessage(ctx, store.Message{ID: m.ID, ConversationID: c.ID, Role: store.RoleUser, Content: textContent("duplicate")}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("append of a taken id: %v", err)
	}
	var body string
	if err := db.r.QueryRowContext(ctx, `SELECT body FROM message_fts WHERE rowid = (SELECT seq FROM messages WHERE id = $1)`, m.ID).Scan(&body); err != nil || body != "changed again" {
		t.Errorf("updated message's entry = %q, %v", body, err)
	}
	if n := count(); n != 4 {
		t.Fatalf("index rows after updates = %d, want 4", n)
	}
	if err := db.DeleteConversation(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("index rows after delete = %d, want 0", n)
	}
}

func TestRenameConversation(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{Title: "old"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.RenameConversation(ctx, c.ID, "חדש new")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != c.ID || got.Title != "חדש new" || !got.CreatedAt.Equal(c.CreatedAt) || !got.UpdatedAt.Equal(c.UpdatedAt) || got.Messages != nil {
			t.Errorf("renamed = %+v, from %+v", got, c)
		}
		if _, err := db.RenameConversation(ctx, "nope", "t"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing: %v", err)
		}
		if _, err := db.RenameConversation(ctx, c.ID, strings.Repeat("x", store.MaxTitleBytes+1)); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("too long: %v", err)
		}
		if _, err := db.RenameConversation(ctx, c.ID, "a\x00b"); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("NUL: %v", err)
		}
	})
}

// TestSearchMigrationIndexesExistingData upgrades a database that has
// conversations from before migration 0004 (its objects dropped and its row
// removed) and checks that what was there is found, and that what is
// written after the upgrade is found once.
func TestSearchMigrationIndexesExistingData(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.newDSN(t)
			ctx := context.Background()
			db, err := Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			c, err := db.CreateConversation(ctx, store.Conversation{Title: "ישן old"})
			if err == nil {
				_, err = db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent("שלום earlier words")})
			}
			if err != nil {
				t.Fatal(err)
			}
			// Migrations 0012 and 0013 replaced some of 0004's triggers;
			// they run again after 0004 does.
			undo := `DROP TABLE message_fts; DROP TABLE conversation_title_fts; DROP TRIGGER message_fts_delete;
                DROP TRIGGER conversation_title_fts_insert; DROP TRIGGER conversation_title_fts_update; DROP TRIGGER conversation_title_fts_delete;
                DROP TABLE conversation_search_keys;
                DELETE FROM schema_migrations WHERE version IN (4, 12, 13)`
			if db.Engine() == store.EnginePostgres {
				undo = `DROP FUNCTION toolport_message_text CASCADE; DROP INDEX conversations_title_fts;
                    DELETE FROM schema_migrations WHERE version = 4`
			}
			if _, err := db.w.ExecContext(ctx, undo); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openDB(t, dsn)
			if v, err := db.SchemaVersion(ctx); err != nil || v < 4 {
				t.Fatalf("schema version %d, %v", v, err)
			}
			if _, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent("later words")}); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"שלום", "earl", "ישן", "old", "later"} {
				page, err := db.SearchConversations(ctx, q, store.ListOptions{})
				if err != nil || len(page.Conversations) != 1 || page.Conversations[0].ID != c.ID {
					t.Errorf("search %q after upgrade: %+v, %v", q, page, err)
				}
			}
			if db.Engine() == store.EngineSQLite {
				var n int
				if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM message_fts`).Scan(&n); err != nil || n != 2 {
					t.Errorf("%d message entries after the upgrade (%v), want 2", n, err)
				}
			}
			// A conversation from before the upgrade renames and deletes
			// like a new one.
			if _, err := db.RenameConversation(ctx, c.ID, "renamed"); err != nil {
				t.Fatal(err)
			}
			for q, want := range map[string]int{"old": 0, "renamed": 1} {
				if page, err := db.SearchConversations(ctx, q, store.ListOptions{}); err != nil || len(page.Conversations) != want {
					t.Errorf("search %q after the rename: %+v, %v; want %d", q, page, err, want)
				}
			}
			if err := db.DeleteConversation(ctx, c.ID); err != nil {
				t.Fatal(err)
			}
			if page, err := db.SearchConversations(ctx, "renamed", store.ListOptions{}); err != nil || len(page.Conversations) != 0 {
				t.Errorf("search after the delete: %+v, %v", page, err)
			}
			if db.Engine() == store.EngineSQLite {
				var n int
				if err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM conversation_title_fts) + (SELECT count(*) FROM conversation_search_keys)`).Scan(&n); err != nil || n != 0 {
					t.Errorf("%d title entries and keys after the delete (%v), want 0", n, err)
				}
			}
		})
	}
}
