package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
)

// assistantContent is a stored assistant turn as in the data model.
const assistantContent = `[
  {"type": "text", "text": "Let me search for some melancholic songs about lost love..."},
  {"type": "tool_use", "id": "tc_789", "name": "semanticSearch",
   "input": {"query": "melancholic songs about lost love", "limit": 10}},
  {"type": "tool_result", "tool_use_id": "tc_789", "content": {
    "tracks": [{"isrc": "USRC12345678", "title": "Someone Like You", "artist": "Adele", "album": "21",
      "inLibrary": true, "isIndexed": true, "score": 0.95, "audioFeatures": {"acousticness": 0.89, "energy": 0.31}}],
    "query": "melancholic songs about lost love", "totalFound": 8, "durationMs": 1234,
    "summary": "Found 8 tracks matching 'melancholic songs about lost love'"}},
  {"type": "text", "text": "שלום! 🎵 Here are the top results:\n\n1. **Someone Like You** by Adele \"quoted\" \\ \u00e9"}
]`

// sameJSON reports whether two JSON documents are equal as values.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

func textContent(s string) json.RawMessage {
	b, _ := json.Marshal([]map[string]string{{"type": "text", "text": s}})
	return b
}

func TestConversationLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{Title: "Sad songs 😢 שירים עצובים"})
		if err != nil {
			t.Fatal(err)
		}
		if c.ID == "" || c.CreatedAt.IsZero() || !c.UpdatedAt.Equal(c.CreatedAt) {
			t.Errorf("CreateConversation = %+v: want an id and both times set", c)
		}

		user, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent("melancholic love songs")})
		if err != nil {
			t.Fatal(err)
		}
		asst, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant,
			Content: json.RawMessage(assistantContent), Usage: &store.Usage{InputTokens: 1200, OutputTokens: 345}})
		if err != nil {
			t.Fatal(err)
		}
		cut, err := db.AppendMessage(ctx, store.Message{ID: "msg_cut", ConversationID: c.ID, Role: store.RoleAssistant,
			Content: json.RawMessage(`[]`), Incomplete: true})
		if err != nil {
			t.Fatal(err)
		}

		got, err := db.GetConversation(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != c.ID || got.Title != c.Title || !got.CreatedAt.Equal(c.CreatedAt) {
			t.Errorf("GetConversation = %+v, want %+v", got, c)
		}
		if !got.UpdatedAt.After(c.UpdatedAt) && !got.UpdatedAt.Equal(c.UpdatedAt) {
			t.Errorf("UpdatedAt went back: %v < %v", got.UpdatedAt, c.UpdatedAt)
		}
		want := []store.Message{user, asst, cut}
		if len(got.Messages) != len(want) {
			t.Fatalf("%d messages back, want %d", len(got.Messages), len(want))
		}
		for i, m := range got.Messages {
			w := want[i]
			if !sameJSON(t, m.Content, w.Content) {
				t.Errorf("message %d content =\n%s\nwant\n%s", i, m.Content, w.Content)
			}
			if db.Engine() == store.EngineSQLite && string(m.Content) != string(w.Content) {
				t.Errorf("message %d: SQLite should keep content byte for byte", i)
			}
			m.Content, w.Content = nil, nil
			if !reflect.DeepEqual(m, w) {
				t.Errorf("message %d =\n%+v\nwant\n%+v", i, m, w)
			}
		}
		if got.Messages[1].Usage == nil || got.Messages[0].Usage != nil || !got.Messages[2].Incomplete {
			t.Errorf("usage and incomplete not kept: %+v", got.Messages)
		}

		// The conversation's JSON has the API's field names.
		b, _ := json.Marshal(got)
		for _, field := range []string{`"id"`, `"title"`, `"createdAt"`, `"messages"`, `"role":"assistant"`, `"conversationId"`, `"inputTokens":1200`} {
			if !strings.Contains(string(b), field) {
				t.Errorf("conversation JSON lacks %s: %s", field, b)
			}
		}

		// Update a message in place.
		cut.Content, cut.Incomplete, cut.Usage = textContent("finished after all"), false, &store.Usage{OutputTokens: 7}
		if err := db.UpdateMessage(ctx, cut); err != nil {
			t.Fatal(err)
		}
		got, _ = db.GetConversation(ctx, c.ID)
		if last := got.Messages[2]; last.ID != "msg_cut" || last.Incomplete || !sameJSON(t, last.Content, cut.Content) ||
			!reflect.DeepEqual(last.Usage, cut.Usage) || !last.CreatedAt.Equal(cut.CreatedAt) {
			t.Errorf("after UpdateMessage: %+v", last)
		}

		// Rename, delete with its messages.
		if err := db.UpdateTitle(ctx, c.ID, "Renamed ✓"); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.GetConversation(ctx, c.ID); got.Title != "Renamed ✓" {
			t.Errorf("title after UpdateTitle = %q", got.Title)
		}
		if err := db.DeleteConversation(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		var left int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE conversation_id = $1`, c.ID).Scan(&left); err != nil || left != 0 {
			t.Errorf("%d messages outlived their conversation (%v)", left, err)
		}
		if _, err := db.GetConversation(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetConversation(deleted) error = %v, want ErrNotFound", err)
		}
	})
}

func TestConversationErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{ID: "conv-1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppendMessage(ctx, store.Message{ID: "m1", ConversationID: c.ID, Role: store.RoleUser, Content: textContent("hi")}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"get missing", func() error { _, err := db.GetConversation(ctx, "nope"); return err }(), store.ErrNotFound},
			{"append to missing", func() error {
				_, err := db.AppendMessage(ctx, store.Message{ConversationID: "nope", Role: store.RoleUser, Content: textContent("x")})
				return err
			}(), store.ErrNotFound},
			{"rename missing", db.UpdateTitle(ctx, "nope", "t"), store.ErrNotFound},
			{"delete missing", db.DeleteConversation(ctx, "nope"), store.ErrNotFound},
			{"update missing message", db.UpdateMessage(ctx, store.Message{ID: "nope", Role: store.RoleUser, Content: textContent("x")}), store.ErrNotFound},
			{"duplicate conversation", func() error { _, err := db.CreateConversation(ctx, store.Conversation{ID: "conv-1"}); return err }(), store.ErrConflict},
			{"duplicate message", func() error {
				_, err := db.AppendMessage(ctx, store.Message{ID: "m1", ConversationID: c.ID, Role: store.RoleUser, Content: textContent("x")})
				return err
			}(), store.ErrConflict},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: error = %v, want %v", tt.name, tt.err, tt.want)
			}
		}
		got, _ := db.GetConversation(ctx, c.ID)
		if len(got.Messages) != 1 || !sameJSON(t, got.Messages[0].Content, textContent("hi")) {
			t.Errorf("a refused write changed the conversation: %+v", got.Messages)
		}
	})
}

func TestAppendMessageRejectsBadContent(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		bad := []struct {
			name    string
			role    store.Role
			content string
		}{
			{"system role", "system", `[]`},
			{"empty role", "", `[]`},
			{"object", store.RoleUser, `{"type":"text","text":"hi"}`},
			{"string", store.RoleUser, `"hi"`},
			{"not JSON", store.RoleUser, `[{"type":"text",}]`},
			{"empty", store.RoleUser, ``},
			{"escaped NUL", store.RoleUser, `[{"type":"text","text":"a\u0000b"}]`},
			{"lone surrogate", store.RoleUser, `[{"type":"text","text":"\ud83d"}]`},
			{"reversed surrogates", store.RoleUser, `[{"type":"text","text":"\ude00\ud83d"}]`},
			{"invalid UTF-8", store.RoleUser, "[\"\xff\"]"},
			{"too large", store.RoleUser, `["` + strings.Repeat("x", store.MaxContentBytes) + `"]`},
		}
		for _, b := range bad {
			_, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: b.role, Content: json.RawMessage(b.content)})
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: AppendMessage error = %v, want ErrInvalid", b.name, err)
			}
		}
		// What looks like those but is fine: an escaped backslash before
		// "u0000", a surrogate pair, literal emoji.
		good := []string{`[{"type":"text","text":"C strings end with \\u0000"}]`, `["\ud83d\ude00"]`, `["😀"]`, ` [ ] `}
		for _, g := range good {
			m, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: json.RawMessage(g)})
			if err != nil {
				t.Errorf("AppendMessage(%s) = %v", g, err)
				continue
			}
			got, _ := db.GetConversation(ctx, c.ID)
			if last := got.Messages[len(got.Messages)-1]; last.ID != m.ID || !sameJSON(t, last.Content, []byte(g)) {
				t.Errorf("content %s came back as %s", g, last.Content)
			}
		}
	})
}

func TestListConversations(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		var ids []string
		for i := range 5 {
			c, err := db.CreateConversation(ctx, store.Conversation{Title: fmt.Sprint("chat ", i), CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
		}
		list := func(opt store.ListOptions) []string {
			t.Helper()
			page, err := db.ListConversations(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range page.Conversations {
				if c.Messages != nil {
					t.Errorf("listing carries messages")
				}
				out = append(out, c.ID)
			}
			return out
		}
		if got, want := list(store.ListOptions{}), []string{ids[4], ids[3], ids[2], ids[1], ids[0]}; !reflect.DeepEqual(got, want) {
			t.Errorf("newest first: got %v, want %v", got, want)
		}
		// A new message moves a conversation to the top.
		if _, err := db.AppendMessage(ctx, store.Message{ConversationID: ids[1], Role: store.RoleUser, Content: textContent("bump")}); err != nil {
			t.Fatal(err)
		}
		if got, want := list(store.ListOptions{Limit: 2}), []string{ids[1], ids[4]}; !reflect.DeepEqual(got, want) {
			t.Errorf("first page after a message: got %v, want %v", got, want)
		}
		if got, want := list(store.ListOptions{Limit: 2, Offset: 4}), []string{ids[0]}; !reflect.DeepEqual(got, want) {
			t.Errorf("last page: got %v, want %v", got, want)
		}
		if got := list(store.ListOptions{Query: "chat 3"}); !reflect.DeepEqual(got, []string{ids[3]}) {
			t.Errorf("title filter: got %v", got)
		}
		page, _ := db.ListConversations(ctx, store.ListOptions{Limit: 1})
		if page.Total != 5 {
			t.Errorf("Total = %d, want 5", page.Total)
		}
	})
}

// TestConcurrentWriters runs writers side by side (two handles on one
// database, as two processes would, each with several goroutines) and checks
// that none fails with a busy or serialization error and nothing is lost.
func TestConcurrentWriters(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.newDSN(t)
			dbs := []*DB{openDB(t, dsn), openDB(t, dsn)}
			ctx := context.Background()
			c, err := dbs[0].CreateConversation(ctx, store.Conversation{Title: "busy"})
			if err != nil {
				t.Fatal(err)
			}
			const writers, perWriter = 8, 25
			var wg sync.WaitGroup
			errs := make(chan error, writers*perWriter+writers)
			for w := range writers {
				db := dbs[w%len(dbs)]
				wg.Go(func() {
					for i := range perWriter {
						_, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser,
							Content: textContent(fmt.Sprintf("writer %d message %d ✍️", w, i))})
						if err != nil {
							errs <- err
							return
						}
					}
				})
				// Other tables at the same time.
				wg.Go(func() {
					rec := store.IndexRecord{ISRC: fmt.Sprintf("QZCON%07d", w), Title: "t", Embedding: testVector(w, 32), Embedder: "e"}
					for range 5 {
						if err := db.UpsertIndex(ctx, []store.IndexRecord{rec}); err != nil {
							errs <- err
							return
						}
						if _, err := db.GetConversation(ctx, c.ID); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			got, err := dbs[1].GetConversation(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Messages) != writers*perWriter {
				t.Fatalf("%d messages stored, want %d", len(got.Messages), writers*perWriter)
			}
			// Each writer's messages are in the order it appended them.
			next := make([]int, writers)
			for _, m := range got.Messages {
				var blocks []struct{ Text string }
				if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) != 1 {
					t.Fatalf("content %s: %v", m.Content, err)
				}
				var w, i int
				if _, err := fmt.Sscanf(blocks[0].Text, "writer %d message %d", &w, &i); err != nil {
					t.Fatalf("content %q: %v", blocks[0].Text, err)
				}
				if i != next[w] {
					t.Errorf("writer %d: message %d stored where %d was expected", w, i, next[w])
				}
				next[w] = i + 1
			}
		})
	}
}

func FuzzJSONBSafe(f *testing.F) {
	for _, s := range []string{`["a"]`, `["\u0000"]`, `["\\u0000"]`, `["\ud83d\ude00"]`, `["\ud83d"]`, `["\ude00"]`, `[1,{"a":"\u00e9"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		err := jsonbSafe(b)
		var v any
		if json.Unmarshal(b, &v) != nil {
			return // valid, but out of float64's range: nothing to compare with
		}
		if err == nil && strings.ContainsRune(fmt.Sprint(v), 0) {
			t.Fatalf("accepted %q, which holds a NUL character", b)
		}
		if err != nil && !strings.Contains(string(b), `\u`) && !strings.Contains(err.Error(), "UTF-8") {
			t.Fatalf("rejected %q without any \\u escape: %v", b, err)
		}
	})
}

func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{"", "sqlite:x.db", "sqlite:///a/b", "postgres://h/d", ":memory:", "x://y", "sqlite:%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		kind, target, err := parseDSN(dsn)
		if err != nil {
			return
		}
		if kind != store.EngineSQLite && kind != store.EnginePostgres {
			t.Fatalf("parseDSN(%q) kind %q", dsn, kind)
		}
		if kind == store.EnginePostgres && target != strings.TrimSpace(dsn) {
			t.Fatalf("parseDSN(%q) changed a PostgreSQL URL into %q", dsn, target)
		}
	})
}

// Appends that arrive together may share a transaction (SQLite's group
// commit); one that fails must not take the others with it, and each caller
// learns its own outcome.
func TestConcurrentAppendsFailAlone(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{Title: "burst"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppendMessage(ctx, store.Message{ID: "taken", ConversationID: c.ID, Role: store.RoleUser, Content: textContent("first")}); err != nil {
			t.Fatal(err)
		}
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		const n = 120
		type outcome struct {
			i   int
			err error
		}
		results := make(chan outcome, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				m := store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent(fmt.Sprintf("burst %d", i))}
				callCtx := ctx
				switch i % 30 {
				case 7:
					m.ConversationID = "no-such-conversation"
				case 11:
					m.ID = "taken"
				case 13:
					callCtx = canceled
				}
				_, err := db.AppendMessage(callCtx, m)
				results <- outcome{i, err}
			})
		}
		wg.Wait()
		close(results)
		stored := 0
		for r := range results {
			var want error
			switch r.i % 30 {
			case 7:
				want = store.ErrNotFound
			case 11:
				want = store.ErrConflict
			case 13:
				want = context.Canceled
			}
			switch {
			case want == nil && r.err != nil:
				t.Errorf("append %d failed: %v", r.i, r.err)
			case want != nil && !errors.Is(r.err, want):
				t.Errorf("append %d: got %v, want %v", r.i, r.err, want)
			case want == nil:
				stored++
			}
		}
		got, err := db.GetConversation(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != stored+1 {
			t.Errorf("%d messages stored, want %d", len(got.Messages), stored+1)
		}
	})
}

func TestAppendAfterCloseFails(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "closed.db"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateConversation(context.Background(), store.Conversation{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := db.AppendMessage(context.Background(), store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent("late")}); err == nil {
		t.Error("append on a closed store succeeded")
	}
}

func TestMessageErrorRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		// A turn that failed before any output: no content, only the error.
		failed := &store.MessageError{Code: "MODEL_ERROR", Message: "the model server failed (HTTP 500): überlastet"}
		early, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant,
			Content: json.RawMessage(`[]`), Incomplete: true, Error: failed})
		if err != nil {
			t.Fatal(err)
		}
		// A turn that grows, then fails: the update adds the error.
		late, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant,
			Content: textContent("Let me think"), Incomplete: true})
		if err != nil {
			t.Fatal(err)
		}
		late.Error = &store.MessageError{Code: "MODEL_TIMEOUT", Message: "the model server timed out"}
		if err := db.UpdateMessage(ctx, late); err != nil {
			t.Fatal(err)
		}
		got, err := db.GetConversation(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 2 {
			t.Fatalf("%d messages back, want 2", len(got.Messages))
		}
		if e := got.Messages[0].Error; !reflect.DeepEqual(e, early.Error) || !got.Messages[0].Incomplete {
			t.Errorf("early failure back as %+v (incomplete %v), want %+v", e, got.Messages[0].Incomplete, early.Error)
		}
		if e := got.Messages[1].Error; !reflect.DeepEqual(e, late.Error) {
			t.Errorf("late failure back as %+v, want %+v", e, late.Error)
		}
		b, _ := json.Marshal(got.Messages[0])
		if !strings.Contains(string(b), `"error":{"code":"MODEL_ERROR","message":"the model server failed (HTTP 500): überlastet"}`) {
			t.Errorf("message JSON lacks the error: %s", b)
		}

		// A retried turn that then succeeds clears the error.
		late.Error, late.Incomplete = nil, false
		if err := db.UpdateMessage(ctx, late); err != nil {
			t.Fatal(err)
		}
		got, _ = db.GetConversation(ctx, c.ID)
		if e := got.Messages[1].Error; e != nil {
			t.Errorf("after clearing, error = %+v, want nil", e)
		}
		if b, _ := json.Marshal(got.Messages[1]); strings.Contains(string(b), `"error"`) {
			t.Errorf("a message without error has an error field: %s", b)
		}
	})
}

func TestMessageErrorValidated(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			e    store.MessageError
		}{
			{"no code", store.MessageError{Message: "failed"}},
			{"long code", store.MessageError{Code: strings.Repeat("X", store.MaxErrorCodeBytes+1), Message: "failed"}},
			{"long message", store.MessageError{Code: "MODEL_ERROR", Message: strings.Repeat("x", store.MaxErrorMessageBytes+1)}},
			{"NUL", store.MessageError{Code: "MODEL_ERROR", Message: "a\x00b"}},
			{"bad UTF-8", store.MessageError{Code: "MODEL_ERROR", Message: "a\xffb"}},
		} {
			_, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant,
				Content: json.RawMessage(`[]`), Error: &tc.e})
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: AppendMessage error = %v, want ErrInvalid", tc.name, err)
			}
		}
	})
}
