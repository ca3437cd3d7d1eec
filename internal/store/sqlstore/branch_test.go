package sqlstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

func TestTruncateConversation(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{Title: "branches"})
		if err != nil {
			t.Fatal(err)
		}
		other, err := db.CreateConversation(ctx, store.Conversation{Title: "other"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i, role := range []store.Role{store.RoleUser, store.RoleAssistant, store.RoleUser, store.RoleAssistant} {
			m, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: role,
				Content: []byte(`[{"type":"text","text":"m` + string(rune('0'+i)) + ` searchable` + `"}]`)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
		}
		keep, err := db.AppendMessage(ctx, store.Message{ConversationID: other.ID, Role: store.RoleUser, Content: []byte(`[{"type":"text","text":"searchable"}]`)})
		if err != nil {
			t.Fatal(err)
		}

		for _, tc := range []struct {
			name, conv, from string
		}{
			{"unknown conversation", "nope", ids[0]},
			{"unknown message", c.ID, "nope"},
			{"message of another conversation", c.ID, keep.ID},
		} {
			if _, err := db.TruncateConversation(ctx, tc.conv, tc.from); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: err = %v, want ErrNotFound", tc.name, err)
			}
		}

		// From the second user message on: the first exchange stays.
		n, err := db.TruncateConversation(ctx, c.ID, ids[2])
		if err != nil || n != 2 {
			t.Fatalf("TruncateConversation = %d, %v; want 2 messages removed", n, err)
		}
		got, err := db.GetConversation(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 2 || got.Messages[0].ID != ids[0] || got.Messages[1].ID != ids[1] {
			t.Fatalf("messages after truncation = %v, want the first two", got.Messages)
		}
		// Appends go on after the cut, in order.
		m, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: []byte(`[{"type":"text","text":"edited"}]`)})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ = db.GetConversation(ctx, c.ID); len(got.Messages) != 3 || got.Messages[2].ID != m.ID {
			t.Fatalf("after an append: %d messages, last %q; want 3, the new one last", len(got.Messages), got.Messages[len(got.Messages)-1].ID)
		}
		// The other conversation is untouched.
		if o, _ := db.GetConversation(ctx, other.ID); len(o.Messages) != 1 {
			t.Errorf("the other conversation has %d messages, want 1", len(o.Messages))
		}
		// Removed text is no longer found by search.
		if _, err := db.TruncateConversation(ctx, c.ID, ids[1]); err != nil {
			t.Fatal(err)
		}
		page, err := db.SearchConversations(ctx, "m3", store.ListOptions{})
		if err != nil || page.Total != 0 {
			t.Errorf("search for removed text: %d found, %v; want none", page.Total, err)
		}
	})
}

func TestSetConversationModel(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{Title: "model"})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := db.GetConversation(ctx, c.ID); got.Model != "" {
			t.Errorf("a new conversation's model = %q, want \"\" (the default)", got.Model)
		}
		if err := db.SetConversationModel(ctx, c.ID, "openai:gpt-4.1"); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.GetConversation(ctx, c.ID); got.Model != "openai:gpt-4.1" {
			t.Errorf("model = %q, want openai:gpt-4.1", got.Model)
		}
		if err := db.SetConversationModel(ctx, "nope", "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown conversation: %v, want ErrNotFound", err)
		}
		for _, bad := range []string{strings.Repeat("m", store.MaxModelBytes+1), "a\x00b", "\xff"} {
			if err := db.SetConversationModel(ctx, c.ID, bad); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("model %q: %v, want ErrInvalid", bad, err)
			}
		}
	})
}

func TestContextTokensRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleAssistant, Content: []byte(`[]`),
			Usage: &store.Usage{InputTokens: 30, OutputTokens: 4}})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := db.GetConversation(ctx, c.ID)
		if u := got.Messages[0].Usage; u == nil || *u != (store.Usage{InputTokens: 30, OutputTokens: 4}) {
			t.Errorf("usage without context tokens = %+v, want 30/4/0", u)
		}
		m.Usage = &store.Usage{InputTokens: 1500, OutputTokens: 90, ContextTokens: 1020}
		if err := db.UpdateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		got, _ = db.GetConversation(ctx, c.ID)
		if u := got.Messages[0].Usage; u == nil || *u != *m.Usage {
			t.Errorf("usage after update = %+v, want %+v", u, *m.Usage)
		}
	})
}
